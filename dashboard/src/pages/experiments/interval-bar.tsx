// A confidence interval drawn on a scale shared by the arms of one metric: a line from ci_low to
// ci_high and a dot at the mean. SVG attributes only (the CSP allows no inline style); the numbers
// are in the table beside it and in the image's label.
export interface Scale {
  min: number;
  max: number;
}

/** One scale for several intervals, padded a little so no dot sits on the edge. */
export function scaleOf(values: (number | null | undefined)[]): Scale | null {
  const finite = values.filter((value): value is number => typeof value === 'number' && Number.isFinite(value));
  if (finite.length === 0) return null;
  const min = Math.min(...finite);
  const max = Math.max(...finite);
  const pad = (max - min) * 0.05 || Math.abs(max) * 0.05 || 1;
  return { min: min - pad, max: max + pad };
}

export function IntervalBar({ low, mean, high, scale, label }: { low: number | null; mean: number | null; high: number | null; scale: Scale | null; label: string }) {
  if (!scale || mean === null) return <span class="muted-text">no data</span>;
  const x = (value: number) => ((value - scale.min) / (scale.max - scale.min)) * 200;
  return (
    <svg class="interval" viewBox="0 0 200 20" width="200" height="20" role="img" aria-label={label}>
      <line class="axis" x1="0" y1="10" x2="200" y2="10" />
      {low !== null && high !== null && <rect class="range" x={x(low)} y="5" width={Math.max(1, x(high) - x(low))} height="10" rx="2" />}
      <circle class="mean" cx={x(mean)} cy="10" r="4" />
    </svg>
  );
}
