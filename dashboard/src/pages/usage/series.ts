// The costs report as a chart wants it: every bucket of the range (the API leaves out buckets without
// traffic; the chart shows them as zero) and one line per listed group.
import type { ChartSeries } from '../../components/chart.js';
import type { CostMeasures, CostsReport, GroupFields } from '../../types/analytics.js';

export interface Shaped {
  times: number[];
  requests: ChartSeries[];
  cost: ChartSeries[];
}

/** A group's name from the fields group_by named, e.g. `openai / gpt-4o-mini`. */
export function groupName(fields: GroupFields, groupBy: readonly string[]): string {
  if (groupBy.length === 0) return 'All traffic';
  return groupBy.map((name) => String(fields[(name === 'key' ? 'key_id' : name) as keyof GroupFields] ?? '—')).join(' / ');
}

export function shape(report: CostsReport): Shaped {
  const step = report.bucket === 'hour' ? 3600 : 86_400;
  const first = Math.floor(Date.parse(report.start) / 1000);
  const last = Math.floor(Date.parse(report.end) / 1000);
  const times: number[] = [];
  for (let time = first; time < last && times.length < 5000; time += step) times.push(time);
  const index = new Map(times.map((time, position) => [time, position]));

  const lines = new Map<string, { requests: number[]; cost: number[] }>();
  const line = (name: string) => {
    let found = lines.get(name);
    if (!found) lines.set(name, (found = { requests: times.map(() => 0), cost: times.map(() => 0) }));
    return found;
  };
  // Listed groups first, in the API's order (largest first), so colours follow size.
  for (const group of report.groups) line(groupName(group, report.group_by));
  for (const row of report.series) {
    const position = index.get(Math.floor(Date.parse(row.bucket) / 1000));
    if (position === undefined) continue;
    const target = line(groupName(row, report.group_by));
    target.requests[position]! += row.requests;
    target.cost[position]! += row.cost_usd;
  }
  const entries = [...lines.entries()];
  return {
    times,
    requests: entries.map(([label, values]) => ({ label, values: values.requests })),
    cost: entries.map(([label, values]) => ({ label, values: values.cost })),
  };
}

/** The rows of the summary table: each group over the range, or the totals when nothing is grouped. */
export function summaryRows(report: CostsReport): { name: string; measures: CostMeasures }[] {
  if (report.group_by.length === 0) return [{ name: 'All traffic', measures: report.totals }];
  return report.groups.map((group) => ({ name: groupName(group, report.group_by), measures: group }));
}
