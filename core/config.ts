// Loads every declared setting from the environment at boot: empty values count as unset,
// per-environment variants win over plain names, lists are split on commas, JSON values parsed,
// numbers and booleans coerced, then one ajv validation. Any problem becomes one ConfigError
// naming every bad variable; the caller exits with status 1.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { ENVIRONMENTS, variantName, type Environment, type KnownNames, type SettingSpec, type SettingsSchema } from './settings.js';

export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export interface LoadedConfig {
  values: Readonly<Record<string, unknown>>;
  env: Environment | undefined;
  /** Variables that look like ours but that nothing declares (probably typos). */
  unknown: string[];
  /** Names the operator set explicitly (plain or variant), for "declared but not acted on" warnings. */
  explicit: ReadonlySet<string>;
}

const ANNOTATIONS = new Set(['required', 'secret', 'variants', 'envDefaults', 'hint', 'example', 'check']);

export interface LoadOptions {
  /** Variables with these prefixes that nothing declares are reported as unknown (probably typos). */
  prefixes?: readonly string[];
  /** What settings' checks compare against. */
  known?: KnownNames;
}

export function mergeSchemas(schemas: readonly SettingsSchema[]): Record<string, SettingSpec> {
  const all: Record<string, SettingSpec> = {};
  for (const schema of schemas) {
    for (const [name, spec] of Object.entries(schema)) {
      if (name in all) throw new Error(`setting ${name} is declared twice`);
      all[name] = spec;
    }
  }
  return all;
}

export function loadConfig(source: NodeJS.ProcessEnv, schemas: readonly SettingsSchema[], options: LoadOptions = {}): LoadedConfig {
  const prefixes = options.prefixes ?? ['MODELGATE_'];
  const known = options.known ?? { providers: [] };
  const specs = mergeSchemas(schemas);
  const problems: string[] = [];
  const raw = (name: string) => {
    const value = source[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };

  const envRaw = raw('MODELGATE_ENV')?.toLowerCase();
  let env: Environment | undefined;
  if (envRaw !== undefined) {
    if ((ENVIRONMENTS as readonly string[]).includes(envRaw)) env = envRaw as Environment;
    else problems.push(`MODELGATE_ENV: must be one of ${ENVIRONMENTS.join(', ')} (got "${envRaw}")`);
  }

  const input: Record<string, unknown> = {};
  const explicit = new Set<string>();
  const from: Record<string, string> = {};
  for (const [name, spec] of Object.entries(specs)) {
    const variant = env && spec.variants?.includes(env) ? variantName(name, env) : undefined;
    let value: string | undefined;
    if (variant && raw(variant) !== undefined) {
      value = raw(variant);
      from[name] = variant;
      explicit.add(name);
    } else if (raw(name) !== undefined) {
      value = raw(name);
      from[name] = name;
      explicit.add(name);
    } else if (env && spec.envDefaults?.[env] !== undefined) {
      value = spec.envDefaults[env];
    }
    if (value === undefined) continue;
    const parsed = preParse(spec, value);
    if (parsed.error) problems.push(`${from[name] ?? name}: ${parsed.error}${shown(spec, value)}`);
    else input[name] = parsed.value;
  }

  const validate = compile(specs);
  const invalid = new Set<string>();
  if (!validate(input)) {
    for (const error of validate.errors ?? []) {
      const name = error.instancePath.split('/')[1] || (error.params as { missingProperty?: string }).missingProperty || '';
      const spec = specs[name];
      if (!spec) continue;
      invalid.add(name);
      problems.push(`${from[name] ?? name}: ${describe(error, spec)}${shown(spec, source[from[name] ?? name])}`);
    }
  }
  // Checks beyond the schema, in the same pass: every bad variable is named in one error.
  for (const [name, spec] of Object.entries(specs)) {
    if (!spec.check || invalid.has(name) || input[name] === undefined) continue;
    for (const problem of spec.check(input[name] as never, known)) problems.push(`${from[name] ?? name}: ${problem}`);
  }
  if (problems.length > 0) throw new ConfigError([...new Set(problems)]);

  const declared = new Set(Object.keys(specs).flatMap((name) => [name, ...ENVIRONMENTS.map((e) => variantName(name, e))]));
  declared.add('MODELGATE_ENV');
  const unknown = Object.keys(source).filter((name) => prefixes.some((p) => name.startsWith(p)) && !declared.has(name));
  return { values: Object.freeze(input), env, unknown, explicit };
}

function preParse(spec: SettingSpec, value: string): { value?: unknown; error?: string } {
  if (spec.type === 'array') {
    return { value: value.split(',').map((item) => item.trim()).filter((item) => item !== '') };
  }
  if (spec.type === 'object') {
    try {
      return { value: JSON.parse(value) };
    } catch (error) {
      // The parser quotes the text around the fault: for a secret (headers with a token) that is the secret.
      return { error: spec.secret ? 'must be a JSON object (it is not valid JSON)' : `must be a JSON object (${(error as Error).message})` };
    }
  }
  if (spec.type === 'boolean') {
    const lower = value.toLowerCase();
    if (lower === 'true' || lower === '1' || lower === 'yes') return { value: true };
    if (lower === 'false' || lower === '0' || lower === 'no') return { value: false };
    return { error: 'must be true or false' };
  }
  if (spec.type === 'integer' || spec.type === 'number') {
    const number = Number(value);
    if (!Number.isFinite(number)) return { error: spec.type === 'integer' ? 'must be an integer' : 'must be a number' };
    return { value: number };
  }
  return { value };
}

/**
 * Compiled validators by schema: compiling the whole settings schema takes ~0.25 s, and a process
 * that builds several apps (the tests, a restart in place) reads the same schemas each time.
 */
const compiled = new Map<string, ValidateFunction>();

/** The JSON schema the settings are validated by (the specs without their annotations). */
export function settingsJsonSchema(specs: Record<string, SettingSpec>): { type: 'object'; properties: Record<string, unknown>; required: string[] } {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const [name, spec] of Object.entries(specs)) {
    properties[name] = Object.fromEntries(Object.entries(spec).filter(([key]) => !ANNOTATIONS.has(key)));
    if (spec.required) required.push(name);
  }
  return { type: 'object', properties, required };
}

/**
 * Compiled once per start, and validating a few values once: neither checked against ajv's
 * meta-schema (that compiles the meta-schema too) nor optimised, which together halved the compile
 * (~0.1 s less CPU per start). The settings' schemas are code; a test checks them against the
 * meta-schema instead. Unknown keywords are still refused (strict).
 */
const SETTINGS_AJV = { allErrors: true, useDefaults: true, strict: true, validateSchema: false, code: { optimize: false } } as const;

function compile(specs: Record<string, SettingSpec>): ValidateFunction {
  const schema = settingsJsonSchema(specs);
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = new Ajv(SETTINGS_AJV).compile(schema);
    compiled.set(key, validate);
  }
  return validate;
}

function describe(error: ErrorObject, spec: SettingSpec): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return 'is required (missing or empty)';
    case 'pattern':
      return spec.hint ? `must ${spec.hint}` : `must match ${String(params.pattern)}`;
    case 'enum':
      return `must be one of ${(params.allowedValues as string[]).join(', ')}`;
    case 'type':
      return `must be ${params.type === 'integer' ? 'an integer' : `a ${String(params.type)}`}`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
      return `must be ${String(params.comparison)} ${String(params.limit)}`;
    default:
      return error.message ?? 'is invalid';
  }
}

function shown(spec: SettingSpec, value: string | undefined): string {
  if (value === undefined || value.trim() === '') return '';
  return spec.secret ? '' : ` (got "${value.trim()}")`;
}
