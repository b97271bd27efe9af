// How a module declares the environment variables it reads: a JSON schema fragment per variable,
// with its default and description. The config loader (core/config.ts) validates them all at boot;
// scripts/gen-example-env.ts turns them into config/example.env. The schema is the documentation.

export const ENVIRONMENTS = ['dev', 'staging', 'prod'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

interface Common {
  description: string;
  /** Startup fails when it is missing or empty. */
  required?: boolean;
  /** Never echoed in errors or logs. */
  secret?: boolean;
  /** Per-environment variants (`MODELGATE_PROD_X`, `OPENAI_DEV_API_KEY`) honoured for these environments. */
  variants?: readonly Environment[];
  /** Defaults that apply when `MODELGATE_ENV` names that environment and nothing was set. */
  envDefaults?: Partial<Record<Environment, string>>;
  /** Says in words what `pattern` demands, for the boot error. */
  hint?: string;
  /** Shown in config/example.env instead of the default (for computed defaults). */
  example?: string;
  /**
   * What the schema cannot say (an IP range that does not parse, a provider that does not exist):
   * each problem returned is reported at boot under the variable's name, with every other problem.
   */
  check?(value: never, known: KnownNames): readonly string[];
}

/** Names a setting's check may need that no schema holds. */
export interface KnownNames {
  /** Every provider the gateway has an adapter for. */
  providers: readonly string[];
}

export type SettingSpec =
  | (Common & { type: 'string'; default?: string; enum?: readonly string[]; pattern?: string; minLength?: number })
  | (Common & { type: 'integer' | 'number'; default?: number; minimum?: number; maximum?: number; exclusiveMinimum?: number })
  | (Common & { type: 'boolean'; default?: boolean })
  | (Common & { type: 'array'; default?: readonly string[]; items?: { type: 'string'; pattern?: string } })
  | (Common & { type: 'object'; default?: Record<string, unknown>; additionalProperties?: { type: 'string' } | { type: 'number' } });

export type SettingsSchema = Readonly<Record<string, SettingSpec>>;

type ValueOf<S extends SettingSpec> = S extends { type: 'string'; enum: readonly (infer E)[] }
  ? E
  : S extends { type: 'string' }
    ? string
    : S extends { type: 'integer' | 'number' }
      ? number
      : S extends { type: 'boolean' }
        ? boolean
        : S extends { type: 'array' }
          ? readonly string[]
          : Readonly<Record<string, unknown>>;

/** The validated values of a schema: a setting with a default is always present. */
export type SettingsOf<S extends SettingsSchema> = {
  readonly [K in keyof S]: S[K] extends { default: unknown } | { required: true } ? ValueOf<S[K]> : ValueOf<S[K]> | undefined;
};

export function defineSettings<const S extends SettingsSchema>(schema: S): S {
  return schema;
}

/** `MODELGATE_DAILY_COST_LIMIT` + prod → `MODELGATE_PROD_DAILY_COST_LIMIT`; `OPENAI_API_KEY` → `OPENAI_PROD_API_KEY`. */
export function variantName(name: string, env: Environment): string {
  const cut = name.indexOf('_');
  return `${name.slice(0, cut)}_${env.toUpperCase()}${name.slice(cut)}`;
}
