// How alert wording shows numbers, instants and periods, shared by every event's description.
// Event data arrives as unknown JSON (a newer gateway may send odd values), so every reader here
// tolerates a missing or mistyped field and shows '—' rather than throwing.

export const MISSING = '—';

export function text(value: unknown): string {
  if (value === null || value === undefined || value === '') return MISSING;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value) ?? MISSING;
}

export function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

// Made on the first alert, not at import: the first Intl formatter of a process costs ~15 ms (the
// locale data), and nothing else at start needs one.
let cents: Intl.NumberFormat | undefined;
const CENTS = () => (cents ??= new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 }));

/** Dollars with cents and thousands separators; a sub-cent amount (one request's cost) keeps up to 6 decimals so it is not shown as $0.00. */
export function usd(value: unknown): string {
  const amount = num(value);
  if (amount === undefined) return MISSING;
  const sign = amount < 0 ? '-' : '';
  const abs = Math.abs(amount);
  if (abs === 0 || abs >= 0.01) return `${sign}$${CENTS().format(abs)}`;
  if (abs < 0.000_001) return `${sign}<$0.000001`;
  return `${sign}$${abs.toFixed(6).replace(/0+$/, '')}`;
}

/** A ratio as a percentage: whole numbers when round, else one decimal (0.425 → 42.5%). */
export function percent(value: unknown): string {
  const ratio = num(value);
  if (ratio === undefined) return MISSING;
  return `${Number((ratio * 100).toFixed(1))}%`;
}

/** An ISO instant without the noise of zero milliseconds (2026-11-26T00:00:00Z). */
export function instant(value: unknown): string {
  if (typeof value !== 'string' || value === '') return MISSING;
  const time = Date.parse(value);
  if (Number.isNaN(time)) return value;
  return new Date(time).toISOString().replace('.000Z', 'Z');
}

function unit(count: number, singular: string): string {
  return `${count} ${singular}${count === 1 ? '' : 's'}`;
}

/** A length of time in the largest whole unit: 300 s → "5 minutes", 90 s → "90 seconds". */
export function duration(seconds: number): string {
  if (seconds >= 86_400 && seconds % 86_400 === 0) return unit(seconds / 86_400, 'day');
  if (seconds >= 3600 && seconds % 3600 === 0) return unit(seconds / 3600, 'hour');
  if (seconds >= 60 && seconds % 60 === 0) return unit(seconds / 60, 'minute');
  return unit(Number(seconds.toFixed(1)), 'second');
}

/** "the last 5 minutes", "the last minute". */
export function lastWindow(value: unknown): string {
  const seconds = num(value);
  if (seconds === undefined) return 'the recent window';
  const words = duration(seconds);
  return words.startsWith('1 ') ? `the last ${words.slice(2)}` : `the last ${words}`;
}

/** A rough elapsed time between two instants, for "down for 12 minutes". */
export function elapsed(from: unknown, to: unknown): string | undefined {
  const start = typeof from === 'string' ? Date.parse(from) : NaN;
  const end = typeof to === 'string' ? Date.parse(to) : NaN;
  if (Number.isNaN(start) || Number.isNaN(end) || end < start) return undefined;
  const seconds = Math.round((end - start) / 1000);
  if (seconds < 120) return unit(seconds, 'second');
  if (seconds < 7200) return unit(Math.round(seconds / 60), 'minute');
  if (seconds < 172_800) return unit(Math.round(seconds / 3600), 'hour');
  return unit(Math.round(seconds / 86_400), 'day');
}

const PERIODS: Record<string, { adjective: string; label: string }> = {
  day: { adjective: 'daily', label: 'day' },
  week: { adjective: 'weekly', label: 'ISO week' },
  month: { adjective: 'monthly', label: 'month' },
};

/** "daily", "weekly", "monthly"; an unknown period is named as sent. */
export function periodAdjective(period: unknown): string {
  return PERIODS[String(period)]?.adjective ?? `${text(period)}`;
}

/** Which period a budget counts: "day 2026-11-25", "ISO week 2026-W48", "month 2026-11". */
export function periodLabel(period: unknown, periodKey: unknown): string {
  const label = PERIODS[String(period)]?.label ?? text(period);
  return periodKey === undefined || periodKey === null ? label : `${label} ${text(periodKey)}`;
}

export function capitalize(words: string): string {
  return words.charAt(0).toUpperCase() + words.slice(1);
}
