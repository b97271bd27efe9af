// A uPlot time-series chart: as wide as its container (redrawn when the container resizes, so it is
// readable at 390 px), destroyed with the component. To assistive technology it is one image named by
// `label`; the page shows the same numbers in a table beside it.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef } from 'preact/hooks';

export interface ChartSeries {
  label: string;
  values: (number | null)[];
}

interface ChartProps {
  /** What the chart shows, for screen readers (role="img"). */
  label: string;
  /** Bucket starts, epoch seconds. */
  times: number[];
  series: ChartSeries[];
  formatValue: (value: number) => string;
  height?: number;
}

// Distinct colours with at least 3:1 contrast on white.
const COLOURS = ['#1f5fbf', '#b3261e', '#1b7a3a', '#8a5a00', '#6b3fa0', '#00707a', '#a0306b', '#444c56', '#c2410c', '#0f766e'];

export function Chart({ label, times, series, formatValue, height = 260 }: ChartProps) {
  const ref = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const container = ref.current;
    if (!container) return;
    const options: uPlot.Options = {
      width: Math.max(container.clientWidth, 200),
      height,
      series: [
        { label: 'Time' },
        ...series.map((one, index) => ({
          label: one.label,
          stroke: COLOURS[index % COLOURS.length],
          width: 2,
          value: (_chart: uPlot, value: number | null) => (value === null ? '—' : formatValue(value)),
        })),
      ],
      axes: [{}, { size: 64, values: (_chart, values) => values.map((value) => formatValue(value)) }],
      scales: { y: { range: (_chart, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
    };
    const chart = new uPlot(options, [times, ...series.map((one) => one.values)] as uPlot.AlignedData, container);
    const resized = new ResizeObserver(() => chart.setSize({ width: Math.max(container.clientWidth, 200), height }));
    resized.observe(container);
    return () => {
      resized.disconnect();
      chart.destroy();
    };
  }, [times, series, formatValue, height]);

  // uPlot draws into the inner element, whose width is the wrapper's without its padding.
  return (
    <div class="chart" role="img" aria-label={label}>
      <div ref={ref} />
    </div>
  );
}
