// The one guard for "a JSON object" (not null, not an array), used wherever an adapter reads JSON
// it does not control: a client's request fields and a provider's bodies, events and error bodies.

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
