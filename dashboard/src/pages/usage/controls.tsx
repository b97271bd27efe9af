// The analytics API's controls: range (a preset or two UTC dates), bucket, grouping, and the key,
// provider and model filters. Selects and dates apply at once; the text filters when submitted.
import { useEffect, useState } from 'preact/hooks';
import { Field } from '../../components/ui.js';
import { GROUPINGS, PRESETS, isPreset, showQuery, utcDate, type UsageQuery } from './query.js';

export function UsageControls({ query, admin }: { query: UsageQuery; admin: boolean }) {
  const [filters, setFilters] = useState({ key_id: query.key_id, provider: query.provider, model: query.model });
  useEffect(() => setFilters({ key_id: query.key_id, provider: query.provider, model: query.model }), [query.key_id, query.provider, query.model]);

  const change = (next: Partial<UsageQuery>) => showQuery({ ...query, ...next });
  const custom = !isPreset(query.start);
  const groupings = GROUPINGS.filter((grouping) => admin || grouping.value !== 'key');

  return (
    <form
      class="toolbar usage-controls"
      aria-label="Usage filters"
      onSubmit={(event) => {
        event.preventDefault();
        change(filters);
      }}
    >
      <Field label="Time range">
        <select
          value={custom ? 'custom' : query.start}
          onChange={(event) => {
            const value = event.currentTarget.value;
            change(value === 'custom' ? { start: utcDate(6), end: utcDate() } : { start: value, end: '' });
          }}
        >
          {PRESETS.map((preset) => (
            <option key={preset.value} value={preset.value}>
              {preset.label}
            </option>
          ))}
          <option value="custom">Custom dates (UTC)</option>
        </select>
      </Field>
      {custom && (
        <>
          <Field label="From (UTC)">
            <input type="date" value={query.start} max={query.end || undefined} onChange={(event) => event.currentTarget.value && change({ start: event.currentTarget.value })} />
          </Field>
          <Field label="To (UTC)">
            <input type="date" value={query.end} min={query.start} onChange={(event) => change({ end: event.currentTarget.value })} />
          </Field>
        </>
      )}
      <Field label="Bucket">
        <select value={query.bucket} onChange={(event) => change({ bucket: event.currentTarget.value })}>
          <option value="">Automatic</option>
          <option value="hour">Hour</option>
          <option value="day">Day</option>
        </select>
      </Field>
      <Field label="Group by">
        <select value={query.group_by} onChange={(event) => change({ group_by: event.currentTarget.value })}>
          {groupings.map((grouping) => (
            <option key={grouping.value} value={grouping.value}>
              {grouping.label}
            </option>
          ))}
        </select>
      </Field>
      {admin && (
        <Field label="Key id">
          <input value={filters.key_id} placeholder="any" onInput={(event) => setFilters({ ...filters, key_id: event.currentTarget.value })} />
        </Field>
      )}
      <Field label="Provider">
        <input value={filters.provider} placeholder="any" onInput={(event) => setFilters({ ...filters, provider: event.currentTarget.value })} />
      </Field>
      <Field label="Model">
        <input value={filters.model} placeholder="any" onInput={(event) => setFilters({ ...filters, model: event.currentTarget.value })} />
      </Field>
      <button type="submit">Apply filters</button>
    </form>
  );
}
