// Budget periods: the UTC calendar day, the ISO week (Monday to Sunday, numbered by the year of its
// Thursday) and the UTC calendar month. Each has a key that names it in stores and the ledger
// (`2025-01-31`, `2025-W05`, `2025-01`) and the instant it resets.

export const PERIODS = ['day', 'week', 'month'] as const;
export type PeriodName = (typeof PERIODS)[number];

export interface Period {
  name: PeriodName;
  /** `2025-01-31`, `2025-W05`, `2025-01`. */
  key: string;
  /** `day:2025-01-31`: the name and the key, what names a period among those of every name (built once, not per lookup). */
  id: string;
  /** Epoch ms of its first instant and of the first instant of the next one. */
  start: number;
  resetsAt: number;
}

const DAY_MS = 86_400_000;
const pad = (n: number, width = 2) => String(n).padStart(width, '0');

export function dayKey(ms: number): string {
  const date = new Date(ms);
  return `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
}

/** The ISO week containing `ms`: its key and its Monday 00:00 UTC. */
export function isoWeek(ms: number): { key: string; start: number } {
  const dayStart = Math.floor(ms / DAY_MS) * DAY_MS;
  const weekday = (new Date(dayStart).getUTCDay() + 6) % 7; // Monday 0 … Sunday 6
  const start = dayStart - weekday * DAY_MS;
  const thursday = new Date(start + 3 * DAY_MS);
  const year = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * DAY_MS)) + 1;
  return { key: `${year}-W${pad(week)}`, start };
}

/** The periods of the current UTC day, kept until the day ends (every request asks, twice). */
let today: { start: number; periods: Record<PeriodName, Period> } | undefined;

export function currentPeriods(now: number = Date.now()): Record<PeriodName, Period> {
  const dayStart = Math.floor(now / DAY_MS) * DAY_MS;
  if (today?.start === dayStart) return today.periods;
  const periods = Object.freeze(periodsAt(now));
  // Only the present is worth keeping; a caller asking about another instant gets its own.
  if (Math.abs(Date.now() - now) < DAY_MS) today = { start: dayStart, periods };
  return periods;
}

function periodsAt(now: number): Record<PeriodName, Period> {
  const date = new Date(now);
  const dayStart = Math.floor(now / DAY_MS) * DAY_MS;
  const week = isoWeek(now);
  const monthStart = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  const day = dayKey(now);
  const month = `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}`;
  return {
    day: { name: 'day', key: day, id: `day:${day}`, start: dayStart, resetsAt: dayStart + DAY_MS },
    week: { name: 'week', key: week.key, id: `week:${week.key}`, start: week.start, resetsAt: week.start + 7 * DAY_MS },
    month: { name: 'month', key: month, id: `month:${month}`, start: monthStart, resetsAt: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) },
  };
}

/** Every day key from `from` to `to` inclusive (epoch ms), oldest first. */
export function daysBetween(from: number, to: number): string[] {
  const days: string[] = [];
  for (let ms = Math.floor(from / DAY_MS) * DAY_MS; ms <= to; ms += DAY_MS) days.push(dayKey(ms));
  return days;
}

export const PERIOD_LABEL: Record<PeriodName, string> = { day: 'Daily', week: 'Weekly', month: 'Monthly' };
