// Bodies kept for later (request records, log lines) are cut to a bound before anything else is done
// with them: what is past the bound is never kept, so it is not worth anonymizing or masking either.
/**
 * `value` with its strings cut so that together they hold at most `budget` characters: what is
 * past the bound is never kept, so it is not anonymized either (a 20 MB body held the event loop
 * 1.5 s when it was anonymized whole, then cut to 1 MB). `perString` bounds each string as well.
 */
export interface Budget {
  /** Characters the strings still to come may keep. */
  left: number;
  /** Characters any one string may keep. */
  perString?: number;
  /** Set once a string was cut. */
  cut?: boolean;
}

export function clipStrings(value: unknown, budget: Budget, depth = 0): unknown {
  if (typeof value === 'string') {
    const room = Math.max(0, Math.min(budget.left, budget.perString ?? budget.left));
    if (value.length <= room) {
      budget.left -= value.length;
      return value;
    }
    budget.left -= room;
    budget.cut = true;
    return `${value.slice(0, room)}…[${value.length - room} characters cut]`;
  }
  if (typeof value !== 'object' || value === null || depth > 64) return value;
  if (Array.isArray(value)) return value.map((item) => clipStrings(item, budget, depth + 1));
  const copy: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value as Record<string, unknown>)) copy[name] = clipStrings(item, budget, depth + 1);
  return copy;
}

