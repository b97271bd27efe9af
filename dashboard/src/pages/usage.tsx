// Usage and costs: requests and cost over time from GET /v1/analytics/costs, one line per provider,
// model or key, with the API's range, bucket, grouping and filters (kept in the hash), the same numbers
// as tables, and the report as CSV (format=csv).
import { useMemo, useState } from 'preact/hooks';
import type { PageProps } from '../app.js';
import { get, getText } from '../api.js';
import { Chart } from '../components/chart.js';
import { formatCost } from '../components/money.js';
import { downloadText } from '../components/download.js';
import { useLoaded } from '../components/use-loaded.js';
import { Empty, ErrorNotice, Loading, formatCount, formatDate } from '../components/ui.js';
import type { CostsReport } from '../types/analytics.js';
import { UsageControls } from './usage/controls.js';
import { apiQuery, readQuery } from './usage/query.js';
import { shape } from './usage/series.js';
import { BucketTable, SummaryTable } from './usage/tables.js';
import './usage/usage.css';

export function Usage({ session, query }: PageProps) {
  const controls = readQuery(query);
  const asked = apiQuery(controls);
  const report = useLoaded(() => get<CostsReport>(`/v1/analytics/costs?${asked}`), [asked]);

  return (
    <section>
      <h1>Usage and costs</h1>
      <UsageControls query={controls} admin={session.admin} />
      <ErrorNotice error={report.error} />
      {report.loading && !report.data && <Loading what="Loading usage" />}
      {report.data && !report.error && <Report report={report.data} csvQuery={apiQuery(controls, 'csv')} loading={report.loading} />}
    </section>
  );
}

function Report({ report, csvQuery, loading }: { report: CostsReport; csvQuery: string; loading: boolean }) {
  const shaped = useMemo(() => shape(report), [report]);
  const range = `${formatDate(report.start)} to ${formatDate(report.end)}`;
  const by = report.group_by.length ? ` by ${report.group_by.join(' and ').replace('key_id', 'key')}` : '';

  return (
    <div aria-busy={loading}>
      <p class="usage-summary">
        {range}, per {report.bucket}: <strong>{formatCount(report.totals.requests)}</strong> requests costing{' '}
        <strong>{formatCost(report.totals.cost_usd)}</strong>
        {report.filters.key_id && <> (key {report.filters.key_id})</>}.
      </p>
      <CsvButton query={csvQuery} />
      {report.series.length === 0 ? (
        <Empty>No requests in this range yet. Send a request through the gateway, or widen the range.</Empty>
      ) : (
        <>
          {report.groups_truncated && <p class="notice">Only the largest groups are shown; narrow the filters to see the others.</p>}
          <h2>Requests{by}</h2>
          <Chart label={`Requests per ${report.bucket}${by}, ${range}, ${shaped.requests.length} lines. The tables below list the numbers.`} times={shaped.times} series={shaped.requests} formatValue={formatCount} counts utc={report.bucket === 'day'} />
          <h2>Cost{by}</h2>
          <Chart label={`Cost in USD per ${report.bucket}${by}, ${range}, ${shaped.cost.length} lines. The tables below list the numbers.`} times={shaped.times} series={shaped.cost} formatValue={formatCost} utc={report.bucket === 'day'} />
          <h2>Totals over the range</h2>
          <SummaryTable report={report} />
          <BucketTable report={report} />
        </>
      )}
    </div>
  );
}

function CsvButton({ query }: { query: string }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <div class="actions csv">
      <button
        type="button"
        class="secondary"
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          setError(null);
          try {
            downloadText(await getText(`/v1/analytics/costs?${query}`), `modelgate-costs-${new Date().toISOString().slice(0, 10)}.csv`);
          } catch (failure) {
            setError(failure);
          } finally {
            setBusy(false);
          }
        }}
      >
        {busy ? 'Preparing CSV…' : 'Download CSV'}
      </button>
      <ErrorNotice error={error} />
    </div>
  );
}
