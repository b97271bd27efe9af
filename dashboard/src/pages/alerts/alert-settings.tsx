// The alert rules and channels as GET /v1/admin/alerts tells them: read-only (they are settings), and
// shown field by field for whatever the answer holds. A gateway without that route says so.
import { ApiError, get } from '../../api.js';
import { Empty, ErrorNotice, formatDate, formatPercent, Loading } from '../../components/ui.js';
import { useLoaded } from '../../components/use-loaded.js';
import type { AlertSettings } from './types.js';

const text = (value: unknown): string =>
  value === null || value === undefined ? '—' : typeof value === 'object' ? JSON.stringify(value) : String(value);

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
      <h3>Budget rules</h3>
      {rules.length === 0 ? (
        <Empty>No budget alert rules are set.</Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Threshold</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {rules.map((rule, index) => (
                <tr key={index}>
                  <td>{typeof rule.threshold === 'number' ? formatPercent(rule.threshold, 0) : text(rule.threshold)}</td>
                  <td>{text(rule.action)}</td>
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
        <div class="table-wrap">
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
      {settings.error_rate && typeof settings.error_rate === 'object' && (
        <>
          <h3>Error-rate alert</h3>
          <dl class="facts">
            {Object.entries(settings.error_rate).map(([name, value]) => (
              <div key={name}>
                <dt>{name.replace(/_/g, ' ')}</dt>
                <dd>{text(value)}</dd>
              </div>
            ))}
          </dl>
        </>
      )}
      <h3>Recent alerts</h3>
      {recent.length === 0 ? (
        <Empty>No alert fired recently.</Empty>
      ) : (
        <ul class="recent">
          {recent.map((alert, index) => (
            <li key={alert.id ?? index}>
              <strong>{text(alert.type)}</strong> · {formatDate(alert.timestamp ?? null)} <code>{text(alert.data)}</code>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
