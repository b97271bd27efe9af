// The chart's numbers as tables: each group over the range, then (folded) every bucket × group row.
import { formatCost } from '../../components/money.js';
import { TableWrap } from '../../components/table-wrap.js';
import { formatCount, formatDate } from '../../components/ui.js';
import type { CostsReport } from '../../types/analytics.js';
import { groupName, summaryRows } from './series.js';

const groupHeading = (report: CostsReport) => (report.group_by.length ? report.group_by.map((name) => (name === 'key_id' ? 'key' : name)).join(' / ') : 'Traffic');

export function SummaryTable({ report }: { report: CostsReport }) {
  return (
    <TableWrap label="Totals per group">
      <table>
        <caption class="visually-hidden">Requests and cost per {groupHeading(report)} over the range</caption>
        <thead>
          <tr>
            <th scope="col">{capitalize(groupHeading(report))}</th>
            <th scope="col" class="num">Requests</th>
            <th scope="col" class="num">Cache hits</th>
            <th scope="col" class="num">Prompt tokens</th>
            <th scope="col" class="num">Completion tokens</th>
            <th scope="col" class="num">Cost</th>
            <th scope="col" class="num">Saved by cache</th>
          </tr>
        </thead>
        <tbody>
          {summaryRows(report).map(({ name, measures }) => (
            <tr key={name}>
              <th scope="row" class="group-name">{name}</th>
              <td class="num">{formatCount(measures.requests)}</td>
              <td class="num">{formatCount(measures.cache_hits)}</td>
              <td class="num">{formatCount(measures.prompt_tokens)}</td>
              <td class="num">{formatCount(measures.completion_tokens)}</td>
              <td class="num">{formatCost(measures.cost_usd)}</td>
              <td class="num">{formatCost(measures.saved_usd)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

export function BucketTable({ report }: { report: CostsReport }) {
  return (
    <details class="buckets">
      <summary>Every {report.bucket} ({report.series.length} rows)</summary>
      <TableWrap label={`Requests and cost per ${report.bucket}`}>
        <table>
          <thead>
            <tr>
              <th scope="col">{report.bucket === 'hour' ? 'Hour starting' : 'Day (UTC)'}</th>
              <th scope="col">{capitalize(groupHeading(report))}</th>
              <th scope="col" class="num">Requests</th>
              <th scope="col" class="num">Cost</th>
            </tr>
          </thead>
          <tbody>
            {report.series.map((row, index) => (
              <tr key={index}>
                <td>{report.bucket === 'hour' ? formatDate(row.bucket) : row.bucket.slice(0, 10)}</td>
                <td>{groupName(row, report.group_by)}</td>
                <td class="num">{formatCount(row.requests)}</td>
                <td class="num">{formatCost(row.cost_usd)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </details>
  );
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
