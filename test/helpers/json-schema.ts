// Validates a value against a client's JSON Schema the way a strict client would (ajv, every error,
// formats checked): for the demo's structured answers and tool-call arguments. The project ships
// no ajv-formats, so the formats the tests use are defined here, strictly enough to catch prose.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Ajv } from 'ajv';

const FORMATS: Record<string, RegExp> = {
  'date-time': /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
  date: /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/,
  time: /^\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
  email: /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
  hostname: /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i,
  ipv4: /^((25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(25[0-5]|2[0-4]\d|1?\d?\d)$/,
  ipv6: /^[0-9a-f:]+$/i,
  uri: /^[a-z][a-z0-9+.-]*:[^\s]*$/i,
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  duration: /^P(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(\d+H)?(\d+M)?(\d+S)?)?$/,
};

function withFormats<T extends { addFormat(name: string, format: RegExp): unknown }>(ajv: T): T {
  for (const [name, pattern] of Object.entries(FORMATS)) ajv.addFormat(name, pattern);
  return ajv;
}

const draft2020 = withFormats(new Ajv2020({ allErrors: true, strict: false }));
const draft7 = withFormats(new Ajv({ allErrors: true, strict: false }));

/** Null when `value` is valid against `schema`, else ajv's errors as text (so t.equal(…, null) shows them). */
export function schemaErrors(schema: Record<string, unknown>, value: unknown): string | null {
  const ajv = typeof schema.$schema === 'string' && schema.$schema.includes('draft-07') ? draft7 : draft2020;
  const validate = ajv.compile(schema);
  return validate(value) ? null : ajv.errorsText(validate.errors);
}
