// Settings → API Keys: a page of keys at a time (cursor pages, so 100k keys stay fast), searched by
// name, owner, prefix or id and filtered by owner and status; create, edit, regenerate and revoke, with a
// new secret shown once. The API answers every question; the page keeps no key of its own.
import { useEffect, useState } from 'preact/hooks';
import type { PageProps } from '../app.js';
import { del, get, post } from '../api.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { Pager, useCursor } from '../components/cursor-pager.js';
import { SecretDialog } from '../components/secret-dialog.js';
import { Dialog, Empty, ErrorNotice, formatDate, Loading } from '../components/ui.js';
import { FormField } from '../components/form-field.js';
import { useDebounced, useLoaded } from '../components/use-loaded.js';
import { KeyForm } from './keys/key-form.js';
import { KeyTable, type KeyAction } from './keys/key-table.js';
import type { ApiKey, IssuedApiKey, KeyList } from './keys/types.js';
import '../components/admin-pages.css';

const PAGE_SIZE = 50;

type Open = { action: 'create' } | { action: KeyAction; key: ApiKey } | null;

/** The API's search: part of a name or owner (any case), or the start of a prefix (`uc_…`) or id (`key_…`). */
function searchQuery(search: string) {
  const text = search.trim();
  return text ? { search: text } : {};
}

export function Keys(_props: PageProps) {
  const [search, setSearch] = useState('');
  const [owner, setOwner] = useState('');
  const [status, setStatus] = useState('');
  const [open, setOpen] = useState<Open>(null);
  const [issued, setIssued] = useState<IssuedApiKey | null>(null);
  const [done, setDone] = useState('');
  const filters = { ...searchQuery(useDebounced(search)), owner: useDebounced(owner).trim(), status };
  const cursor = useCursor();
  const filterKey = JSON.stringify(filters);
  useEffect(cursor.reset, [filterKey]);
  const list = useLoaded(() => get<KeyList>('/v1/admin/keys', { limit: PAGE_SIZE, after: cursor.after, ...filters }), [filterKey, cursor.after]);
  const filtered = Boolean(search.trim() || owner.trim() || status);

  const close = () => setOpen(null);
  const finished = (message: string) => {
    setOpen(null);
    setDone(message);
    list.reload();
  };

  return (
    <section class={open || issued ? 'keys-page dialog-open' : 'keys-page'}>
      <h1>API keys</h1>
      <div class="toolbar">
        <FormField label="Search keys" hint="Part of a name or owner, or the start of a prefix (uc_…) or id.">
          <input type="search" value={search} onInput={(event) => setSearch(event.currentTarget.value)} autoComplete="off" />
        </FormField>
        <FormField label="Owner">
          <input type="search" value={owner} onInput={(event) => setOwner(event.currentTarget.value)} autoComplete="off" />
        </FormField>
        <FormField label="Status">
          <select value={status} onChange={(event) => setStatus(event.currentTarget.value)}>
            <option value="">All</option>
            <option value="active">Active</option>
            <option value="revoked">Revoked</option>
          </select>
        </FormField>
        <button type="button" class="toolbar-end" onClick={() => setOpen({ action: 'create' })}>
          Create key
        </button>
      </div>
      <p role="status" class="success">
        {done}
      </p>
      <ErrorNotice error={list.error} />
      {list.loading && !list.data && <Loading what="Loading keys" />}
      {list.data && list.data.data.length === 0 && (
        <Empty>{filtered ? 'No key matches these filters.' : 'No keys yet — create one with “Create key”.'}</Empty>
      )}
      {list.data && list.data.data.length > 0 && (
        <KeyTable
          keys={list.data.data}
          onAction={(action, key) => {
            setDone('');
            setOpen({ action, key });
          }}
        />
      )}
      {list.data && <Pager cursor={cursor} hasMore={list.data.has_more} lastId={list.data.last_id} label="Pages of keys" />}

      {open?.action === 'create' && (
        <Dialog title="Create key" open onClose={close}>
          <KeyForm
            onCancel={close}
            onSaved={(key) => {
              finished(`Key “${key.name}” created.`);
              setIssued(key as IssuedApiKey);
            }}
          />
        </Dialog>
      )}
      {open?.action === 'edit' && (
        <Dialog title={`Edit ${open.key.name}`} open onClose={close}>
          <KeyForm existing={open.key} onCancel={close} onSaved={(key) => finished(`Key “${key.name}” saved.`)} />
        </Dialog>
      )}
      {open?.action === 'regenerate' && (
        <ConfirmDialog
          title={`Regenerate ${open.key.name}?`}
          confirmLabel="Regenerate"
          onClose={close}
          onConfirm={async () => {
            const key = await post<IssuedApiKey>(`/v1/admin/keys/${open.key.id}/regenerate`);
            finished(`Key “${key.name}” regenerated.`);
            setIssued(key);
          }}
        >
          <p>
            The key <strong>{open.key.name}</strong> (<code>{open.key.prefix}…</code>) gets a new secret. The current secret keeps working for a grace period, then
            it is refused.
          </p>
        </ConfirmDialog>
      )}
      {open?.action === 'revoke' && (
        <ConfirmDialog
          title={`Revoke ${open.key.name}?`}
          confirmLabel="Revoke key"
          danger
          onClose={close}
          onConfirm={async () => {
            const key = await del<ApiKey>(`/v1/admin/keys/${open.key.id}`);
            finished(`Key “${key.name}” revoked.`);
          }}
        >
          <p>
            Requests with <strong>{open.key.name}</strong> (<code>{open.key.prefix}…</code>) will be refused from now on. This cannot be undone; the record stays.
          </p>
        </ConfirmDialog>
      )}
      {issued && (
        <SecretDialog title={issued.previous_key_expires_at === undefined ? 'Your new key' : 'Your regenerated key'} secret={issued.key} onClose={() => setIssued(null)}>
          {issued.previous_key_expires_at !== undefined && (
            <p>
              {issued.previous_key_expires_at
                ? `The old secret keeps working until ${formatDate(issued.previous_key_expires_at)}.`
                : 'The old secret no longer works (no grace period).'}
            </p>
          )}
        </SecretDialog>
      )}
    </section>
  );
}
