// The alert rules and channels as GET /v1/admin/alerts tells them: read-only (they are settings), and
// shown field by field for whatever the answer holds. A gateway without that route says so.
import { ApiError, get } from '../../api.js';
import { Empty, ErrorNotice, formatDate, formatPercent, Loading } from '../../components/ui.js';
import { useLoaded } from '../../components/use-loaded.js';
import type { AlertSettings } from './types.js';

const text = (value: unknown): string =>
  value === null || value === undefined ? '—' : typeof value === 'object' ? JSON.stringify(value) : String(value);

const UNITS: Record<string, (value: number) => string> = {
  threshold: (value) => formatPercent(value, 0),
  window_seconds: (value) => `in ${value} s`,
  min_requests: (value) => `after ${value} requests`,
  min_calls: (value) => `after ${value} calls`,
  recovery_ms: (value) => `open ${value / 1000} s`,
  days_before: (value) => `${value} days before`,
};

/** A rule's numbers in words (`80%`, `in 300 s`); a field this page does not know, as name: value. */
function ruleNumbers(rule: Record<string, unknown>): string {
  const parts = Object.entries(rule)
    .filter(([name]) => !['type', 'enabled', 'action'].includes(name))
    .map(([name, value]) => (typeof value === 'number' && UNITS[name] ? UNITS[name](value) : `${name.replace(/_/g, ' ')}: ${text(value)}`));
  return parts.length ? parts.join(', ') : 'each time';
}

/** Events that are not alerts (docs/events.md) go to webhook endpoints only. */
const NOT_ALERTS = new Set(['provider.circuit_opened', 'provider.circuit_closed', 'rate_limit.hit', 'key.created', 'key.regenerated', 'key.revoked', 'experiment.finished']);

function destination(rule: { type?: string; action?: string }): string {
  if (rule.action === 'pause') return 'pause spending';
  if (rule.action !== undefined) return text(rule.action);
  return rule.type && NOT_ALERTS.has(rule.type) ? 'webhook endpoints only' : 'every alert channel that is on';
}

export function AlertSettingsView() {
  const alerts = useLoaded(() => get<AlertSettings>('/v1/admin/alerts'), []);
  if (alerts.error instanceof ApiError && alerts.error.status === 404)
    return (
      <p class="notice">
        This gateway does not describe its alert settings (GET /v1/admin/alerts answered 404). Alerts are configured with the MODELGATE_*_ALERTS_* settings;
        see docs/events.md.
      </p>
    );
  if (alerts.error) return <ErrorNotice error={alerts.error} />;
  const settings = alerts.data;
  if (!settings) return <Loading what="Loading alert settings" />;
  const rules = Array.isArray(settings.rules) ? settings.rules : [];
  const channels = Array.isArray(settings.channels) ? settings.channels : [];
  const recent = Array.isArray(settings.recent) ? settings.recent : [];
  return (
    <div class="alert-settings">
      <p>
        Alerts are <strong>{settings.enabled === false ? 'off' : settings.enabled ? 'on' : 'not reported'}</strong>
        {typeof settings.cooldown_seconds === 'number' && <> · the same alert fires again after {settings.cooldown_seconds} s at the earliest</>}.
      </p>
      <h3>Rules</h3>
      {rules.length === 0 ? (
        <Empty>No alert rules are set.</Empty>
      ) : (
        <div class="table-wrap" tabIndex={0}>
          <table>
            <thead>
              <tr>
                <th scope="col">Alert</th>
                <th scope="col">Watched</th>
                <th scope="col">When</th>
                <th scope="col">Goes to</th>
              </tr>
            </thead>
            <tbody>
              {rules.map((rule, index) => (
                <tr key={index}>
                  <td>
                    <code>{text(rule.type)}</code>
                  </td>
                  <td>{rule.enabled === false ? <span class="badge muted">off</span> : <span class="badge ok">on</span>}</td>
                  <td>{ruleNumbers(rule)}</td>
                  <td>{destination(rule)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h3>Channels</h3>
      {channels.length === 0 ? (
        <Empty>No alert channel is set up (e-mail, chat or an alert webhook).</Empty>
      ) : (
        <div class="table-wrap" tabIndex={0}>
          <table>
            <thead>
              <tr>
                <th scope="col">Channel</th>
                <th scope="col">State</th>
                <th scope="col">Goes to</th>
              </tr>
            </thead>
            <tbody>
              {channels.map((channel, index) => (
                <tr key={index}>
                  <td>{text(channel.type)}</td>
                  <td>{channel.enabled === false ? <span class="badge muted">off</span> : <span class="badge ok">on</span>}</td>
                  <td>{text(channel.target)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h3>Recent alerts</h3>
      {recent.length === 0 ? (
        <Empty>No alert fired recently.</Empty>
      ) : (
        <ul class="recent">
          {recent.map((alert, index) => (
            <li key={alert.id ?? index}>
              <strong>{text(alert.type)}</strong> · {formatDate(alert.timestamp ?? null)}
              {Array.isArray(alert.channels) && alert.channels.length > 0 && <> · to {alert.channels.join(', ')}</>} <code>{text(alert.data)}</code>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
