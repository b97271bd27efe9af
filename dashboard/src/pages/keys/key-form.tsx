// Create or edit a key: name, owner, rate limits, budgets, allowed models and expiry. An edit sends
// only what changed (PATCH); a field emptied is removed where the API takes null (limits, models,
// expiry). A refusal names the field it is about (the API's `param`).
import { useState } from 'preact/hooks';
import { ApiError, patch, post } from '../../api.js';
import { FormError } from '../../components/form-error.js';
import { FormField } from '../../components/form-field.js';
import { useReturnFocus } from '../../components/return-focus.js';
import { BUDGETS, fieldLabel, RATE_LIMITS, type ApiKey, type IssuedApiKey, type KeyLimits, type LimitName } from './types.js';

type Values = { name: string; owner: string; admin: boolean; models: string; expires: string } & Record<LimitName, string>;

function valuesOf(key?: ApiKey): Values {
  const limits = key?.limits ?? {};
  const values = {
    name: key?.name ?? '',
    owner: key?.owner ?? '',
    admin: false,
    models: (key?.allowed_models ?? []).join('\n'),
    expires: key?.expires_at?.slice(0, 10) ?? '',
  } as Values;
  for (const field of [...RATE_LIMITS, ...BUDGETS]) values[field.name] = limits[field.name] === undefined ? '' : String(limits[field.name]);
  return values;
}

function limitsOf(values: Values): KeyLimits | null {
  const limits: KeyLimits = {};
  for (const field of [...RATE_LIMITS, ...BUDGETS]) {
    const text = values[field.name].trim();
    if (text === '') continue;
    const value = Number(text);
    if (!Number.isFinite(value)) throw new ApiError(400, `${field.label} must be a number`, null, `limits.${field.name}`);
    limits[field.name] = value;
  }
  return Object.keys(limits).length ? limits : null;
}

const modelsOf = (text: string) => {
  const models = [...new Set(text.split(/[\s,]+/).filter(Boolean))];
  return models.length ? models : null;
};
const expiryOf = (date: string) => (date ? `${date}T00:00:00Z` : null);
const sameLimits = (a: KeyLimits | null, b: KeyLimits | null) =>
  JSON.stringify(Object.entries(a ?? {}).sort()) === JSON.stringify(Object.entries(b ?? {}).sort());

/** The body of a create: what the form holds, without empty fields. */
function createBody(values: Values) {
  return {
    name: values.name.trim(),
    ...(values.owner.trim() ? { owner: values.owner.trim() } : {}),
    ...(values.admin ? { admin: true } : {}),
    ...(limitsOf(values) ? { limits: limitsOf(values) } : {}),
    ...(modelsOf(values.models) ? { allowed_models: modelsOf(values.models) } : {}),
    ...(values.expires ? { expires_at: expiryOf(values.expires) } : {}),
  };
}

/** The body of an edit: the fields that differ from the key as read. */
function changeBody(values: Values, key: ApiKey) {
  const before = valuesOf(key);
  const body: Record<string, unknown> = {};
  if (values.name.trim() !== key.name) body.name = values.name.trim();
  if (values.owner.trim() && values.owner.trim() !== key.owner) body.owner = values.owner.trim();
  const limits = limitsOf(values);
  if (!sameLimits(limits, key.limits)) body.limits = limits;
  if (modelsOf(values.models)?.join('\n') !== modelsOf(before.models)?.join('\n')) body.allowed_models = modelsOf(values.models);
  if (values.expires !== before.expires) body.expires_at = expiryOf(values.expires);
  return body;
}

export function KeyForm({ existing, onSaved, onCancel }: { existing?: ApiKey; onSaved: (key: ApiKey | IssuedApiKey) => void; onCancel: () => void }) {
  useReturnFocus();
  const [values, setValues] = useState(() => valuesOf(existing));
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const param = error instanceof ApiError ? error.param : null;
  const set = (name: keyof Values) => (event: { currentTarget: HTMLInputElement | HTMLTextAreaElement }) =>
    setValues((now) => ({ ...now, [name]: name === 'admin' ? (event.currentTarget as HTMLInputElement).checked : event.currentTarget.value }));
  const invalid = (name: string) => (param === name || param?.startsWith(`${name}.`) ? true : undefined);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (existing) {
        const body = changeBody(values, existing);
        onSaved(Object.keys(body).length ? await patch<ApiKey>(`/v1/admin/keys/${existing.id}`, body) : existing);
      } else {
        onSaved(await post<IssuedApiKey>('/v1/admin/keys', createBody(values)));
      }
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} class="key-form" noValidate>
      <div class="form-grid">
        <FormField label="Name">
          <input required maxLength={100} value={values.name} onInput={set('name')} aria-invalid={invalid('name')} />
        </FormField>
        <FormField label="Owner" hint={existing ? 'The tenant: usage and cache are kept apart per owner.' : "The tenant; empty: the key's own id."}>
          <input maxLength={100} value={values.owner} onInput={set('owner')} aria-invalid={invalid('owner')} />
        </FormField>
      </div>
      <fieldset>
        <legend>Rate limits</legend>
        <p class="hint">Empty: the gateway's setting applies.</p>
        <div class="form-grid">
          {RATE_LIMITS.map((field) => (
            <FormField key={field.name} label={field.label}>
              <input type="number" min={1} step={1} inputMode="numeric" value={values[field.name]} onInput={set(field.name)} aria-invalid={invalid(`limits.${field.name}`)} />
            </FormField>
          ))}
        </div>
      </fieldset>
      <fieldset>
        <legend>Budgets</legend>
        <p class="hint">On top of the gateway's budgets; empty: none for this key.</p>
        <div class="form-grid">
          {BUDGETS.map((field) => (
            <FormField key={field.name} label={field.label}>
              <input type="number" min={0} step="any" inputMode="decimal" value={values[field.name]} onInput={set(field.name)} aria-invalid={invalid(`limits.${field.name}`)} />
            </FormField>
          ))}
        </div>
      </fieldset>
      <FormField label="Allowed models" hint="One per line or comma separated: gpt-4o-mini, anthropic/*. Empty: every model.">
        <textarea rows={3} value={values.models} onInput={set('models')} aria-invalid={invalid('allowed_models')} />
      </FormField>
      <div class="form-grid">
        <FormField label="Expires" hint="At 00:00 UTC that day. Empty: never.">
          <input type="date" value={values.expires} onInput={set('expires')} aria-invalid={invalid('expires_at')} />
        </FormField>
        {!existing && (
          <label class="check">
            <input type="checkbox" checked={values.admin} onChange={set('admin')} /> Admin key (may use the admin API)
          </label>
        )}
      </div>
      <FormError error={error} label={fieldLabel} />
      <div class="actions dialog-actions">
        <button type="submit" disabled={busy}>
          {existing ? 'Save' : 'Create key'}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
