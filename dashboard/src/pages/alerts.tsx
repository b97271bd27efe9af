// Alerts and webhooks: the alert rules and channels (settings, read-only), the webhook endpoints,
// and the delivery log of the endpoint chosen (#/alerts?endpoint=wh_…) with replay.
import type { PageProps } from '../app.js';
import { AlertSettingsView } from './alerts/alert-settings.js';
import { Deliveries } from './alerts/deliveries.js';
import { Endpoints } from './alerts/endpoints.js';
import '../components/admin-pages.css';
import './alerts/alerts.css';

export function Alerts({ query }: PageProps) {
  const endpoint = query.get('endpoint');
  return (
    <>
      <h1>Alerts and webhooks</h1>
      <section aria-labelledby="alerts-heading">
        <h2 id="alerts-heading">Alert rules and channels</h2>
        <AlertSettingsView />
      </section>
      <section aria-labelledby="endpoints-heading">
        <h2 id="endpoints-heading">Webhook endpoints</h2>
        <Endpoints selected={endpoint} />
      </section>
      {endpoint && (
        <section aria-labelledby="deliveries-heading">
          <h2 id="deliveries-heading">
            Deliveries of <code>{endpoint}</code>
          </h2>
          <p>
            <a href="#/alerts">Close the delivery log</a>
          </p>
          <Deliveries endpointId={endpoint} />
        </section>
      )}
    </>
  );
}
