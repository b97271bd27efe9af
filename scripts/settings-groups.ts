// Every settings schema the gateway reads, grouped by the part that owns it, in the order the app is
// assembled: core, the pipeline steps, the providers, then what is declared but not built yet. The
// generated documents read the settings from here — config/example.env (example-env.ts) and
// docs/configuration.md (config-doc.ts) — so both list the same settings in the same order.
import { CORE_SETTINGS, PIPELINE, PROVIDERS } from '../core/app.js';
import type { SettingSpec, SettingsSchema } from '../core/settings.js';
import { serverSettings } from '../core/server-settings.js';
import { loggingSettings } from '../core/logger.js';
import { catalogSettings } from '../core/catalog.js';
import { redisSettings } from '../core/redis.js';
import { storeSettings } from '../core/store/settings.js';
import { responsesSettings } from '../core/responses/store.js';
import { recordSettings } from '../core/records/settings.js';

export type GroupKind = 'core' | 'pipeline' | 'provider';

export interface SettingsGroup {
  /** The owner as a reader names it: `Server`, `rate-limit`, `openai`. */
  name: string;
  kind: GroupKind;
  /** Where a core schema is declared; plugins and providers are known by their name. */
  file?: string;
  schema: SettingsSchema;
}

const core = (name: string, file: string, schema: SettingsSchema): SettingsGroup => ({ name, kind: 'core', file, schema });

export const SETTINGS_GROUPS: readonly SettingsGroup[] = [
  core('Server', 'core/server-settings.ts', serverSettings),
  core('Logging', 'core/logger.ts', loggingSettings),
  core('Model catalog', 'core/catalog.ts', catalogSettings),
  core('Redis', 'core/redis.ts', redisSettings),
  core('Database and retention', 'core/store/settings.ts', storeSettings),
  core('Stored responses', 'core/responses/store.ts', responsesSettings),
  core('Request records and data protection', 'core/records/settings.ts', recordSettings),
  ...PIPELINE.map((plugin): SettingsGroup => ({ name: plugin.name, kind: 'pipeline', schema: plugin.settings })),
  ...PROVIDERS.map((provider): SettingsGroup => ({ name: provider.name, kind: 'provider', schema: provider.settings })),
];
// A schema added to the app but not here would be validated at boot and documented nowhere.
if (SETTINGS_GROUPS.length !== CORE_SETTINGS.length + PIPELINE.length + PROVIDERS.length) throw new Error('a settings group is missing here');

/** How a setting's value is written in the environment. */
export function typeLabel(spec: SettingSpec): string {
  if (spec.type === 'array') return 'comma-separated list';
  if (spec.type === 'object') return 'JSON object';
  return spec.type;
}

/** A value as it would be written in the environment: lists joined by commas, objects as JSON. */
export function envText(value: unknown): string {
  if (Array.isArray(value)) return value.join(',');
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}
