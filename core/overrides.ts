// Per-request overrides of plugin configuration. Each plugin declares the object it accepts (its
// spec shape, e.g. the routing config) and the headers that set its fields; a request may send
// them in the body's `modelgate` object (removed before forwarding) or as headers. The body wins
// over headers (headers are often client-wide defaults). Unknown or invalid values are a 400
// naming the field or header.
import type { IncomingHttpHeaders } from 'node:http';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { GatewayError } from './errors.js';

type FieldSchema =
  | { type: 'string'; enum?: readonly string[]; description: string }
  | { type: 'number' | 'integer'; minimum?: number; maximum?: number; description: string }
  | { type: 'boolean'; description: string }
  | { type: 'array'; items: { type: 'string'; maxLength?: number }; maxItems?: number; description: string };

export interface OverrideSpec {
  /** The key under the body's `modelgate` object, e.g. `routing`. */
  name: string;
  fields: Record<string, FieldSchema>;
  /** Header name (lower case) → the field it sets. */
  headers: Record<string, string>;
}

export type Overrides = Readonly<Record<string, Readonly<Record<string, unknown>>>>;
export type OverrideParser = (body: unknown, headers: IncomingHttpHeaders) => Overrides;

const EMPTY: Overrides = Object.freeze({});

/**
 * Compiled validators by schema: every app compiles the same one (~15 ms), and a process that
 * builds several (the tests, a restart in place) need not compile it again.
 */
const compiled = new Map<string, ValidateFunction>();

/** The JSON schema of the `modelgate` object the plugins' specs accept. */
export function overridesJsonSchema(specs: readonly OverrideSpec[]): Record<string, unknown> {
  const properties = Object.fromEntries(
    specs.map((spec) => [spec.name, { type: 'object', additionalProperties: false, properties: spec.fields }]),
  );
  return { type: 'object', additionalProperties: false, properties };
}

export function compileOverrides(specs: readonly OverrideSpec[]): OverrideParser {
  const schema = overridesJsonSchema(specs);
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    // Not checked against ajv's meta-schema at each start (that compiles the meta-schema, ~15 ms):
    // the specs are code, checked by a test; strict mode still refuses an unknown keyword.
    validate = new Ajv({ allErrors: false, strict: true, validateSchema: false }).compile(schema);
    compiled.set(key, validate);
  }
  const headerFields: Array<{ header: string; spec: OverrideSpec; field: string }> = specs.flatMap((spec) =>
    Object.entries(spec.headers).map(([header, field]) => ({ header, spec, field })),
  );

  return function parse(body, headers) {
    let fromHeaders: Record<string, Record<string, unknown>> | undefined;
    for (const { header, spec, field } of headerFields) {
      const raw = headers[header];
      if (typeof raw !== 'string' || raw.trim() === '') continue;
      const value = fromHeader(raw.trim(), spec.fields[field]!);
      if (value === undefined) throw new GatewayError('bad_request', { param: header, message: `Invalid value for header '${header}': ${describe(spec.fields[field]!)}.` });
      ((fromHeaders ??= {})[spec.name] ??= {})[field] = value;
    }
    if (fromHeaders && !validate(fromHeaders)) throw invalid(validate.errors![0]!, (path) => headerOf(path, headerFields));
    if (body === undefined) return fromHeaders ?? EMPTY;
    if (!validate(body)) throw invalid(validate.errors![0]!, (path) => `modelgate${path}`);
    if (!fromHeaders) return body as Overrides;
    const merged: Record<string, Record<string, unknown>> = { ...fromHeaders };
    for (const [name, values] of Object.entries(body as Overrides)) merged[name] = { ...fromHeaders[name], ...values };
    return merged;
  };
}

function fromHeader(raw: string, schema: FieldSchema): unknown {
  switch (schema.type) {
    case 'number':
    case 'integer': {
      const number = Number(raw);
      return Number.isFinite(number) ? number : undefined;
    }
    case 'boolean':
      return raw === 'true' ? true : raw === 'false' ? false : undefined;
    case 'array':
      return raw.split(',').map((item) => item.trim()).filter(Boolean);
    default:
      return raw;
  }
}

function describe(schema: FieldSchema): string {
  if (schema.type === 'boolean') return 'must be true or false';
  if (schema.type === 'number' || schema.type === 'integer') return `must be ${schema.type === 'integer' ? 'an integer' : 'a number'}`;
  return 'is invalid';
}

function headerOf(path: string, fields: Array<{ header: string; spec: OverrideSpec; field: string }>): string {
  const [, name, field] = path.split('/');
  return fields.find((f) => f.spec.name === name && f.field === field)?.header ?? `modelgate${path}`;
}

function invalid(error: ErrorObject, where: (path: string) => string): GatewayError {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'additionalProperties') {
    const param = where(`${error.instancePath}/${String(params.additionalProperty)}`).replace(/\//g, '.');
    return new GatewayError('bad_request', { param, message: `Unknown override '${param}'.` });
  }
  const param = where(error.instancePath).replace(/\//g, '.');
  const why = error.keyword === 'enum' ? `must be one of ${(params.allowedValues as string[]).join(', ')}` : (error.message ?? 'is invalid');
  return new GatewayError('bad_request', { param, message: `Invalid value for '${param}': ${why}.` });
}
