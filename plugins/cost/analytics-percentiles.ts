// Percentiles from the rollups' histogram columns (counts of requests per latency or overhead
// range). Exact values are not kept, so a percentile is interpolated linearly within the range it
// falls in, as Prometheus' histogram_quantile does: the first range starts at 0, and a percentile
// that falls in the open last range (above its lower bound) reads as that lower bound.

/**
 * The `p` (0..1) percentile of a histogram: `counts[i]` requests fell in (bounds[i-1], bounds[i]],
 * the last count above the last bound. Null when the histogram is empty.
 */
export function percentile(counts: readonly number[], bounds: readonly number[], p: number): number | null {
  const total = counts.reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  const rank = p * total;
  let below = 0;
  for (const [i, count] of counts.entries()) {
    if (count > 0 && below + count >= rank) {
      const lower = i === 0 ? 0 : bounds[i - 1]!;
      if (i >= bounds.length) return lower;
      const upper = bounds[i]!;
      return round(lower + ((rank - below) / count) * (upper - lower));
    }
    below += count;
  }
  return bounds.at(-1) ?? null;
}

const round = (ms: number) => Math.round(ms * 10) / 10;
