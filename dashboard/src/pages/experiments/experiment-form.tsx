// Create an experiment: name, which traffic enters (match.model, percent), the unit, the arms (the
// first is the control), metrics and the primary one, duration; anything else (guardrails, alpha,
// early_stop, match.keys…) as JSON merged over the form's fields.
import { useState } from 'preact/hooks';
import { ApiError, post } from '../../api.js';
import { FormField } from '../../components/form-field.js';
import { useReturnFocus } from '../../components/return-focus.js';
import { FormError } from '../../components/form-error.js';
import type { Experiment } from './types.js';

interface ArmRow {
  name: string;
  model: string;
  weight: string;
}

const LABELS: Record<string, string> = {
  name: 'Name',
  match: 'Model to match',
  unit: 'Unit',
  metrics: 'Metrics',
  primary_metric: 'Primary metric',
  duration_days: 'Duration (days)',
  guardrails: 'Advanced (JSON): guardrails',
};
/** `arms.1.model` → "Arm 2 model". */
function labelOf(param: string): string {
  const [head, index, field] = param.split('.');
  if (head === 'arms' && index !== undefined) return `Arm ${Number(index) + 1}${field ? ` ${field}` : ''}`;
  return LABELS[head!] ?? param;
}

const list = (text: string) => text.split(/[\s,]+/).filter(Boolean);

export function ExperimentForm({ onCreated, onCancel }: { onCreated: (experiment: Experiment) => void; onCancel: () => void }) {
  useReturnFocus();
  const [name, setName] = useState('');
  const [model, setModel] = useState('');
  const [percent, setPercent] = useState('100');
  const [unit, setUnit] = useState('user');
  const [header, setHeader] = useState('');
  const [arms, setArms] = useState<ArmRow[]>([
    { name: 'control', model: '', weight: '1' },
    { name: 'treatment', model: '', weight: '1' },
  ]);
  const [metrics, setMetrics] = useState('cost');
  const [primary, setPrimary] = useState('');
  const [days, setDays] = useState('');
  const [draft, setDraft] = useState(false);
  const [advanced, setAdvanced] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const setArm = (index: number, field: keyof ArmRow, value: string) => setArms((now) => now.map((arm, at) => (at === index ? { ...arm, [field]: value } : arm)));

  const body = () => {
    let extra: Record<string, unknown> = {};
    if (advanced.trim()) {
      try {
        extra = JSON.parse(advanced) as Record<string, unknown>;
      } catch {
        throw new ApiError(400, 'is not JSON: write an object such as {"early_stop": true, "alpha": 0.01}', null, 'advanced');
      }
      if (!extra || typeof extra !== 'object' || Array.isArray(extra)) throw new ApiError(400, 'must be a JSON object', null, 'advanced');
    }
    const match: Record<string, unknown> = { percent: Number(percent) || 100, ...(model.trim() ? { model: model.trim() } : {}) };
    return {
      name: name.trim(),
      match: { ...match, ...((extra.match as object | undefined) ?? {}) },
      unit: unit === 'header' ? `header:${header.trim()}` : unit,
      arms: arms.map((arm) => ({ name: arm.name.trim(), ...(arm.model.trim() ? { model: arm.model.trim() } : {}), weight: Number(arm.weight) })),
      ...(list(metrics).length ? { metrics: list(metrics) } : {}),
      ...(primary.trim() ? { primary_metric: primary.trim() } : {}),
      ...(days.trim() ? { duration_days: Number(days) } : {}),
      ...(draft ? { status: 'draft' } : {}),
      ...Object.fromEntries(Object.entries(extra).filter(([field]) => field !== 'match')),
    };
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onCreated(await post<Experiment>('/v1/admin/experiments', body()));
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} noValidate>
      <div class="form-grid">
        <FormField label="Name" hint="Letters, digits, . _ - (up to 64).">
          <input required value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </FormField>
        <FormField label="Model to match" hint="As clients send it; empty: every chat request.">
          <input value={model} onInput={(event) => setModel(event.currentTarget.value)} placeholder="gpt-4o-mini" />
        </FormField>
        <FormField label="Traffic share (%)">
          <input type="number" min={0} max={100} step="any" value={percent} onInput={(event) => setPercent(event.currentTarget.value)} />
        </FormField>
        <FormField label="Unit" hint="What is assigned to one arm.">
          <select value={unit} onChange={(event) => setUnit(event.currentTarget.value)}>
            <option value="user">user (the request's user field)</option>
            <option value="key">key</option>
            <option value="header">a header</option>
          </select>
        </FormField>
        {unit === 'header' && (
          <FormField label="Header name">
            <input value={header} onInput={(event) => setHeader(event.currentTarget.value)} placeholder="x-session-id" />
          </FormField>
        )}
      </div>
      <fieldset>
        <legend>Arms (the first is the control)</legend>
        {arms.map((arm, index) => (
          <div class="arm-row" key={index}>
            <FormField label={`Arm ${index + 1} name`}>
              <input value={arm.name} onInput={(event) => setArm(index, 'name', event.currentTarget.value)} />
            </FormField>
            <FormField label={`Arm ${index + 1} model`}>
              <input value={arm.model} onInput={(event) => setArm(index, 'model', event.currentTarget.value)} placeholder="openai/gpt-4o" />
            </FormField>
            <FormField label={`Arm ${index + 1} weight`}>
              <input type="number" min={0} step="any" value={arm.weight} onInput={(event) => setArm(index, 'weight', event.currentTarget.value)} />
            </FormField>
            <button type="button" class="secondary" disabled={arms.length <= 2} onClick={() => setArms((now) => now.filter((_, at) => at !== index))} aria-label={`Remove arm ${index + 1}`}>
              Remove
            </button>
          </div>
        ))}
        <button type="button" class="secondary add-arm" disabled={arms.length >= 10} onClick={() => setArms((now) => [...now, { name: `arm${now.length + 1}`, model: '', weight: '1' }])}>
          Add arm
        </button>
      </fieldset>
      <div class="form-grid">
        <FormField label="Metrics" hint="cost, user_satisfaction, quality_score… (comma separated).">
          <input value={metrics} onInput={(event) => setMetrics(event.currentTarget.value)} />
        </FormField>
        <FormField label="Primary metric" hint="Decides; empty: the first metric.">
          <input value={primary} onInput={(event) => setPrimary(event.currentTarget.value)} list="primary-metrics" />
        </FormField>
        <datalist id="primary-metrics">
          {[...list(metrics), 'latency', 'error_rate'].map((metric) => (
            <option key={metric} value={metric} />
          ))}
        </datalist>
        <FormField label="Duration (days)" hint="Empty: the gateway's default.">
          <input type="number" min={1} max={365} step="any" value={days} onInput={(event) => setDays(event.currentTarget.value)} />
        </FormField>
      </div>
      <label class="check">
        <input type="checkbox" checked={draft} onChange={(event) => setDraft(event.currentTarget.checked)} /> Save as a draft (start it later)
      </label>
      <FormField label="Advanced (JSON)" hint='Other fields, merged over the form: {"guardrails": ["error_rate"], "early_stop": true, "alpha": 0.01, "match": {"keys": ["key_…"]}}'>
        <textarea rows={3} value={advanced} onInput={(event) => setAdvanced(event.currentTarget.value)} />
      </FormField>
      <FormError error={error} label={(param) => (param === 'advanced' ? 'Advanced (JSON)' : labelOf(param))} />
      <div class="actions dialog-actions">
        <button type="submit" disabled={busy}>
          Create experiment
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
