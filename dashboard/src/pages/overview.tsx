// Overview: traffic paused or not, spend against the day, week and month budgets (GET /v1/usage), and
// the last 24 hours from the analytics reports: requests, error rate, p95 latency, cache hit ratio,
// the most frequent errors. A non-admin key's numbers are its own (the API restricts them).
import type { PageProps } from '../app.js';
import { get } from '../api.js';
import { TableWrap } from '../components/table-wrap.js';
import { useLoaded } from '../components/use-loaded.js';
import { Empty, ErrorNotice, Loading, formatCount, formatDate, formatMs, formatPercent } from '../components/ui.js';
import type { ErrorsReport, MetricsReport, Usage } from '../types/analytics.js';
import { Budgets } from './overview/budgets.js';
import { TrafficState } from './overview/paused.js';
import './overview/overview.css';

export function Overview({ session }: PageProps) {
  const usage = useLoaded(() => get<Usage>('/v1/usage'), []);
  const day = useLoaded(
    () => Promise.all([get<MetricsReport>('/v1/analytics/metrics', { start: '24h', group_by: 'provider' }), get<ErrorsReport>('/v1/analytics/errors', { start: '24h' })]),
    [],
  );

  return (
    <section>
      <h1>Overview</h1>
      {!session.admin && <p class="scope">The numbers are your key’s own; the budgets are the gateway’s.</p>}
      <ErrorNotice error={usage.error} />
      {usage.loading && !usage.data && <Loading what="Loading spend" />}
      {usage.data && (
        <>
          <TrafficState paused={usage.data.paused} admin={session.admin} onResumed={usage.reload} />
          <h2>Spend against the budgets</h2>
          <Budgets usage={usage.data} />
          <p class="sub generated">As of {formatDate(usage.data.generated_at)}</p>
        </>
      )}
      <h2>Last 24 hours</h2>
      <ErrorNotice error={day.error} />
      {day.loading && !day.data && <Loading what="Loading the last 24 hours" />}
      {day.data && <LastDay metrics={day.data[0]} errors={day.data[1]} />}
    </section>
  );
}

function LastDay({ metrics, errors }: { metrics: MetricsReport; errors: ErrorsReport }) {
  const totals = metrics.totals;
  if (totals.requests === 0) return <Empty>No requests in the last 24 hours yet.</Empty>;
  return (
    <>
      <div class="cards">
        <Card label="Requests" value={formatCount(totals.requests)} sub={plural(errors.totals.errors, 'error')} />
        <Card label="Error rate" value={formatPercent(totals.error_rate)} />
        <Card label="p95 latency" value={formatMs(totals.latency_ms.p95)} sub={`p50 ${formatMs(totals.latency_ms.p50)}`} />
        <Card label="Cache hit ratio" value={formatPercent(totals.cache_hit_ratio)} />
      </div>
      <p>
        <a href="#/usage?start=24h">Requests and cost over time</a>
      </p>
      <h2>Most frequent errors</h2>
      {errors.top_messages.length === 0 ? (
        <Empty>No errors in the last 24 hours.</Empty>
      ) : (
        <TableWrap label="Most frequent errors">
          <table>
            <thead>
              <tr>
                <th scope="col">Code</th>
                <th scope="col">Message (redacted)</th>
                <th scope="col" class="num">Count</th>
              </tr>
            </thead>
            <tbody>
              {errors.top_messages.map((message, index) => (
                <tr key={index}>
                  <td>
                    <code>{message.code}</code>
                  </td>
                  <td class="message">{message.message}</td>
                  <td class="num">{formatCount(message.count)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </>
  );
}

function Card({ label, value, sub }: { label: string; value: string; sub?: string }) {
  return (
    <div class="card">
      <span class="label">{label}</span>
      <span class="value">{value}</span>
      {sub && <span class="sub">{sub}</span>}
    </div>
  );
}

const plural = (count: number, noun: string) => `${formatCount(count)} ${noun}${count === 1 ? '' : 's'}`;
