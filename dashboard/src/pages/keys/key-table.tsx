// One page of keys: who owns each, whether it works, its limits in short, and its actions by name
// ("Edit support-bot"), so a screen reader and the browser tests can tell the rows apart.
import { formatDate, formatUsd } from '../../components/ui.js';
import { LIMIT_FIELDS, type ApiKey } from './types.js';

export type KeyAction = 'edit' | 'regenerate' | 'revoke';

function limitsSummary(key: ApiKey): string {
  const parts = LIMIT_FIELDS.filter((field) => key.limits?.[field.name] !== undefined).map((field) => {
    const value = key.limits![field.name]!;
    return field.usd ? `${formatUsd(value)}${field.short}` : `${value} ${field.short}`;
  });
  if (key.allowed_models) parts.push(`models: ${key.allowed_models.join(', ')}`);
  return parts.length ? parts.join(' · ') : 'Gateway defaults';
}

function StatusBadge({ status, expiresAt }: { status: ApiKey['status']; expiresAt: string | null }) {
  if (status === 'revoked') return <span class="badge bad">revoked</span>;
  if (expiresAt && Date.parse(expiresAt) <= Date.now()) return <span class="badge warn">expired</span>;
  return <span class="badge ok">active</span>;
}

export function KeyTable({ keys, onAction }: { keys: ApiKey[]; onAction: (action: KeyAction, key: ApiKey) => void }) {
  return (
    <div class="table-wrap" tabIndex={0}>
      <table class="keys-table">
        <caption class="visually-hidden">API keys</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Prefix / id</th>
            <th scope="col">Owner</th>
            <th scope="col">Status</th>
            <th scope="col">Limits</th>
            <th scope="col">Expires</th>
            <th scope="col">Last used</th>
            <th scope="col">Created</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.id}>
              <td>
                {key.name}
                {key.admin && <span class="badge muted"> admin</span>}
              </td>
              <td>
                <code>{key.prefix}…</code>
                <br />
                <code class="muted-text">{key.id}</code>
              </td>
              <td>{key.owner === key.id ? <span class="muted-text">itself</span> : key.owner}</td>
              <td>
                <StatusBadge status={key.status} expiresAt={key.expires_at} />
              </td>
              <td class="limits">{limitsSummary(key)}</td>
              <td>{key.expires_at ? formatDate(key.expires_at) : 'Never'}</td>
              <td>{key.last_used_at ? formatDate(key.last_used_at) : 'Never'}</td>
              <td>{formatDate(key.created_at)}</td>
              <td>
                <div class="row-actions">
                  <button type="button" class="secondary" aria-label={`Edit ${key.name}`} onClick={() => onAction('edit', key)}>
                    Edit
                  </button>
                  {key.status === 'active' && (
                    <>
                      <button type="button" class="secondary" aria-label={`Regenerate ${key.name}`} onClick={() => onAction('regenerate', key)}>
                        Regenerate
                      </button>
                      <button type="button" class="danger" aria-label={`Revoke ${key.name}`} onClick={() => onAction('revoke', key)}>
                        Revoke
                      </button>
                    </>
                  )}
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
