// Add or edit a webhook endpoint: URL, the event types it takes (every type, or a chosen few),
// description and enabled. An edit sends only what changed; the endpoint of MODELGATE_WEBHOOK_URL
// may only be enabled or disabled.
import { useState } from 'preact/hooks';
import { patch, post } from '../../api.js';
import { FormField } from '../../components/form-field.js';
import { useReturnFocus } from '../../components/return-focus.js';
import { FormError } from '../../components/form-error.js';
import { EVENT_TYPES, type WebhookEndpoint } from './types.js';

const LABELS: Record<string, string> = { url: 'URL', event_types: 'Event types', description: 'Description', enabled: 'Enabled' };
const labelOf = (param: string) => LABELS[param.split('.')[0]!] ?? param;

export function EndpointForm({ existing, onSaved, onCancel }: { existing?: WebhookEndpoint; onSaved: (endpoint: WebhookEndpoint) => void; onCancel: () => void }) {
  useReturnFocus();
  const [url, setUrl] = useState(existing?.url ?? '');
  const [description, setDescription] = useState(existing?.description ?? '');
  const [every, setEvery] = useState(existing ? existing.event_types.includes('*') : true);
  const [types, setTypes] = useState<string[]>(existing?.event_types.filter((type) => type !== '*') ?? []);
  const [enabled, setEnabled] = useState(existing?.enabled ?? true);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const fromSettings = existing?.source === 'settings';

  const body = () => {
    const eventTypes = every ? ['*'] : types;
    const all = { url: url.trim(), event_types: eventTypes, description: description.trim() || null, enabled };
    if (!existing) return all;
    const changed: Record<string, unknown> = {};
    if (enabled !== existing.enabled) changed.enabled = enabled;
    if (fromSettings) return changed;
    if (all.url !== existing.url) changed.url = all.url;
    if (all.description !== existing.description) changed.description = all.description;
    if (JSON.stringify(eventTypes) !== JSON.stringify(existing.event_types)) changed.event_types = eventTypes;
    return changed;
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const changes = body();
      if (existing && Object.keys(changes).length === 0) return onSaved(existing);
      onSaved(existing ? await patch<WebhookEndpoint>(`/v1/admin/webhooks/${existing.id}`, changes) : await post<WebhookEndpoint>('/v1/admin/webhooks', changes));
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} noValidate>
      <FormField label="URL" hint={fromSettings ? 'Set by MODELGATE_WEBHOOK_URL: change it there.' : 'https://… — a token in the query is never logged and shown as ***.'}>
        <input type="url" required maxLength={2048} value={url} disabled={fromSettings} onInput={(event) => setUrl(event.currentTarget.value)} />
      </FormField>
      <FormField label="Description">
        <input maxLength={500} value={description} disabled={fromSettings} onInput={(event) => setDescription(event.currentTarget.value)} />
      </FormField>
      <fieldset disabled={fromSettings}>
        <legend>Event types</legend>
        <label class="check">
          <input type="checkbox" checked={every} onChange={(event) => setEvery(event.currentTarget.checked)} /> Every type (*), those added later included
        </label>
        {!every && (
          <div class="type-grid">
            {EVENT_TYPES.map((type) => (
              <label class="check" key={type}>
                <input
                  type="checkbox"
                  checked={types.includes(type)}
                  onChange={(event) => setTypes((now) => (event.currentTarget.checked ? [...now, type] : now.filter((other) => other !== type)))}
                />{' '}
                <code>{type}</code>
              </label>
            ))}
          </div>
        )}
      </fieldset>
      <label class="check">
        <input type="checkbox" checked={enabled} onChange={(event) => setEnabled(event.currentTarget.checked)} /> Enabled
      </label>
      <FormError error={error} label={labelOf} />
      <div class="actions dialog-actions">
        <button type="submit" disabled={busy}>
          {existing ? 'Save' : 'Add endpoint'}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
