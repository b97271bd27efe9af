// Providers: health from live traffic (GET /v1/providers/status) beside what is configured
// (GET /v1/providers): state, circuit breaker, success rate, latency, the last error (the API redacts
// it) and cooldowns, with a connection test per provider.
import type { PageProps } from '../app.js';
import { get } from '../api.js';
import { TableWrap } from '../components/table-wrap.js';
import { useLoaded } from '../components/use-loaded.js';
import { Empty, ErrorNotice, Loading, formatCount, formatDate, formatMs, formatPercent } from '../components/ui.js';
import type { ProviderInfo, ProviderStatus } from '../types/analytics.js';
import { TestButton } from './providers/test-button.js';
import './providers/providers.css';

interface Row {
  name: string;
  info?: ProviderInfo;
  status?: ProviderStatus;
}

const STATE_TONE: Record<ProviderStatus['state'], string> = { healthy: 'ok', degraded: 'warn', down: 'bad', unknown: 'muted', not_configured: 'muted' };
const CIRCUIT_TONE: Record<ProviderStatus['circuit'], string> = { closed: 'ok', half_open: 'warn', open: 'bad', disabled: 'muted' };
const words = (text: string) => text.replace(/_/g, ' ');

export function Providers(_props: PageProps) {
  const loaded = useLoaded(
    () => Promise.all([get<{ data: ProviderInfo[] }>('/v1/providers'), get<{ window: string; data: ProviderStatus[] }>('/v1/providers/status')]),
    [],
  );
  const rows = loaded.data ? merge(loaded.data[0].data, loaded.data[1].data) : [];

  return (
    <section>
      <h1>Providers</h1>
      <div class="actions providers-actions">
        <button type="button" class="secondary" onClick={loaded.reload} disabled={loaded.loading}>
          Refresh
        </button>
        {loaded.data && <span class="sub">Figures over {loaded.data[1].window}.</span>}
      </div>
      <ErrorNotice error={loaded.error} />
      {loaded.loading && !loaded.data && <Loading what="Loading providers" />}
      {loaded.data && rows.length === 0 && <Empty>No providers are known to this gateway.</Empty>}
      {rows.length > 0 && (
        <TableWrap label="Providers">
          <table class="providers">
            <thead>
              <tr>
                <th scope="col">Provider</th>
                <th scope="col">State</th>
                <th scope="col">Circuit</th>
                <th scope="col" class="num">Success rate</th>
                <th scope="col" class="num">p50</th>
                <th scope="col" class="num">p95</th>
                <th scope="col">Last error</th>
                <th scope="col">Cooldown</th>
                <th scope="col">Connection test</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <ProviderRow key={row.name} row={row} />
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}

function ProviderRow({ row: { name, info, status } }: { row: Row }) {
  const state = status?.state ?? (info?.configured === false ? 'not_configured' : 'unknown');
  const circuit = status?.circuit ?? info?.circuit ?? 'disabled';
  return (
    <tr>
      <th scope="row" class="provider-name">
        {name}
        {info && <span class="sub">{info.configured ? `${info.models.length} models` : 'no credentials'}</span>}
      </th>
      <td>
        <span class={`badge ${STATE_TONE[state]}`}>{words(state)}</span>
      </td>
      <td>
        <span class={`badge ${CIRCUIT_TONE[circuit]}`}>{words(circuit)}</span>
      </td>
      <td class="num">
        {formatPercent(status?.success_rate)}
        {status && <span class="sub">{formatCount(status.requests)} attempts</span>}
      </td>
      <td class="num">{formatMs(status?.latency_ms?.p50)}</td>
      <td class="num">{formatMs(status?.latency_ms?.p95)}</td>
      <td class="last-error">
        {status?.last_error ? (
          <>
            {status.last_error.message}
            <span class="sub">
              {status.last_error.status ? `status ${status.last_error.status}, ` : ''}
              {status.last_error.reason === 'http_status' ? '' : `${words(status.last_error.reason)}, `}
              {formatDate(status.last_error.at)}
            </span>
          </>
        ) : (
          'None'
        )}
      </td>
      <td>
        {status?.cooldown_until ? `Until ${formatDate(status.cooldown_until)}` : 'None'}
        {status?.cooldowns.map((cooldown) => (
          <span class="sub" key={cooldown.model}>
            {cooldown.model} until {formatDate(cooldown.until)}
          </span>
        ))}
      </td>
      <td>
        <TestButton provider={name} />
      </td>
    </tr>
  );
}

/** One row per provider either list names, in the providers list's order. */
function merge(infos: ProviderInfo[], statuses: ProviderStatus[]): Row[] {
  const rows = new Map<string, Row>(infos.map((info) => [info.name, { name: info.name, info }]));
  for (const status of statuses) rows.set(status.provider, { ...(rows.get(status.provider) ?? { name: status.provider }), status });
  return [...rows.values()];
}
