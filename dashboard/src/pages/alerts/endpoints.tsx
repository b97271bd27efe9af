// The webhook endpoints (at most 100, so one page): add, edit, enable or disable, delete, and open
// one's delivery log (#/alerts?endpoint=wh_…, so a reload keeps it open).
import { useState } from 'preact/hooks';
import { del, get, patch } from '../../api.js';
import { navigate } from '../../router.js';
import { ConfirmDialog } from '../../components/confirm-dialog.js';
import { Dialog, Empty, ErrorNotice, formatDate, Loading } from '../../components/ui.js';
import { useLoaded } from '../../components/use-loaded.js';
import { EndpointForm } from './endpoint-form.js';
import { endpointName, type Page, type WebhookEndpoint } from './types.js';

type Open = { action: 'add' } | { action: 'edit' | 'delete'; endpoint: WebhookEndpoint } | null;

export function Endpoints({ selected }: { selected: string | null }) {
  const list = useLoaded(() => get<Page<WebhookEndpoint>>('/v1/admin/webhooks', { limit: 100 }), []);
  const [open, setOpen] = useState<Open>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState('');
  const finished = (message: string) => {
    setOpen(null);
    setDone(message);
    list.reload();
  };
  const toggle = async (endpoint: WebhookEndpoint) => {
    setError(null);
    try {
      await patch(`/v1/admin/webhooks/${endpoint.id}`, { enabled: !endpoint.enabled });
      finished(`${endpointName(endpoint)} ${endpoint.enabled ? 'disabled' : 'enabled'}.`);
    } catch (caught) {
      setError(caught);
    }
  };

  return (
    <div class={open ? 'dialog-open' : undefined}>
      <div class="toolbar">
        <button type="button" class="toolbar-end" onClick={() => setOpen({ action: 'add' })}>
          Add endpoint
        </button>
      </div>
      <p role="status" class="success">
        {done}
      </p>
      <ErrorNotice error={error ?? list.error} />
      {list.loading && !list.data && <Loading what="Loading endpoints" />}
      {list.data?.data.length === 0 && <Empty>No webhook endpoints yet — add one to receive the gateway's events.</Empty>}
      {list.data && list.data.data.length > 0 && (
        <div class="table-wrap" tabIndex={0}>
          <table>
            <thead>
              <tr>
                <th scope="col">Endpoint</th>
                <th scope="col">Event types</th>
                <th scope="col">State</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((endpoint) => {
                const name = endpointName(endpoint);
                return (
                  <tr key={endpoint.id} class={endpoint.id === selected ? 'selected' : undefined}>
                    <td>
                      {endpoint.description && <strong>{endpoint.description}</strong>}
                      <br />
                      <code class="wrap">{endpoint.url}</code>
                      {endpoint.source === 'settings' && <span class="badge muted"> from settings</span>}
                    </td>
                    <td>{endpoint.event_types.includes('*') ? 'Every type' : endpoint.event_types.join(', ')}</td>
                    <td>
                      {endpoint.enabled ? (
                        <span class="badge ok">enabled</span>
                      ) : (
                        <span class="badge warn">disabled{endpoint.disabled_reason === 'gone' ? ': receiver answered 410' : ''}</span>
                      )}
                    </td>
                    <td>{formatDate(endpoint.created_at)}</td>
                    <td>
                      <div class="row-actions">
                        <button type="button" class="secondary" aria-label={`Deliveries of ${name}`} aria-pressed={endpoint.id === selected} onClick={() => navigate('/alerts', { endpoint: endpoint.id })}>
                          Deliveries
                        </button>
                        <button type="button" class="secondary" aria-label={`Edit ${name}`} onClick={() => setOpen({ action: 'edit', endpoint })}>
                          Edit
                        </button>
                        <button type="button" class="secondary" aria-label={`${endpoint.enabled ? 'Disable' : 'Enable'} ${name}`} onClick={() => toggle(endpoint)}>
                          {endpoint.enabled ? 'Disable' : 'Enable'}
                        </button>
                        {endpoint.source === 'api' && (
                          <button type="button" class="danger" aria-label={`Delete ${name}`} onClick={() => setOpen({ action: 'delete', endpoint })}>
                            Delete
                          </button>
                        )}
                      </div>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {open?.action === 'add' && (
        <Dialog title="Add endpoint" open onClose={() => setOpen(null)}>
          <EndpointForm onCancel={() => setOpen(null)} onSaved={(endpoint) => finished(`${endpointName(endpoint)} added.`)} />
        </Dialog>
      )}
      {open?.action === 'edit' && (
        <Dialog title={`Edit ${endpointName(open.endpoint)}`} open onClose={() => setOpen(null)}>
          <EndpointForm existing={open.endpoint} onCancel={() => setOpen(null)} onSaved={(endpoint) => finished(`${endpointName(endpoint)} saved.`)} />
        </Dialog>
      )}
      {open?.action === 'delete' && (
        <ConfirmDialog
          title={`Delete ${endpointName(open.endpoint)}?`}
          confirmLabel="Delete endpoint"
          danger
          onClose={() => setOpen(null)}
          onConfirm={async () => {
            await del(`/v1/admin/webhooks/${open.endpoint.id}`);
            if (open.endpoint.id === selected) navigate('/alerts');
            finished(`${endpointName(open.endpoint)} deleted.`);
          }}
        >
          <p>
            Nothing more is sent to <code class="wrap">{open.endpoint.url}</code>, and its pending deliveries are skipped. Its delivery log goes with it.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
