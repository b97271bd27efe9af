// Renders config/example.env from the settings schemas: every setting, its default and description,
// grouped by the file that declares it. scripts/gen-example-env.ts writes it; a test fails when the
// committed file is stale.
import { join } from 'node:path';
import { CORE_SETTINGS, PIPELINE, PROVIDERS } from '../core/app.js';
import { projectRoot } from '../core/paths.js';
import { variantName, type SettingSpec, type SettingsSchema } from '../core/settings.js';
import { serverSettings } from '../core/server-settings.js';
import { loggingSettings } from '../core/logger.js';
import { catalogSettings } from '../core/catalog.js';
import { redisSettings } from '../core/redis.js';
import { storeSettings } from '../core/store/settings.js';
import { plannedSettings } from '../core/planned-settings.js';

function wrap(text: string, width = 96): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + word.length + 1 > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

function describe(name: string, spec: SettingSpec): string {
  const out = wrap(spec.description).map((line) => `# ${line}`);
  const facts: string[] = [`type: ${spec.type === 'array' ? 'comma-separated list' : spec.type === 'object' ? 'JSON object' : spec.type}`];
  if ('enum' in spec && spec.enum) facts.push(`one of: ${spec.enum.join(', ')}`);
  if (spec.required) facts.push('required');
  if (spec.variants) facts.push(`per-environment: ${spec.variants.map((env) => variantName(name, env)).join(', ')}`);
  if (spec.envDefaults) facts.push(`defaults by MODELGATE_ENV: ${Object.entries(spec.envDefaults).map(([env, value]) => `${env}=${value}`).join(', ')}`);
  out.push(`# ${facts.join('; ')}`);
  const value = spec.example ?? (spec.default === undefined ? '' : Array.isArray(spec.default) ? spec.default.join(',') : typeof spec.default === 'object' ? JSON.stringify(spec.default) : String(spec.default));
  out.push(spec.required ? `${name}=` : `# ${name}=${value}`);
  return out.join('\n');
}

const core: Array<[string, SettingsSchema]> = [
  ['core/server-settings.ts', serverSettings],
  ['core/logger.ts', loggingSettings],
  ['core/catalog.ts', catalogSettings],
  ['core/redis.ts', redisSettings],
  ['core/store/settings.ts', storeSettings],
];
const groups: Array<[string, SettingsSchema]> = [
  ...core,
  ...PIPELINE.map((plugin): [string, SettingsSchema] => [`pipeline step: ${plugin.name}`, plugin.settings]),
  ...PROVIDERS.map((provider): [string, SettingsSchema] => [`provider: ${provider.name}`, provider.settings]),
  ['core/planned-settings.ts (declared, not acted on yet)', plannedSettings],
];
if (groups.length !== CORE_SETTINGS.length + PIPELINE.length + PROVIDERS.length) throw new Error('a settings group is missing here');

export function renderExampleEnv(): string {
  return [
  '# modelgate configuration: every setting the gateway reads, with its default.',
  '# Generated from the settings schemas by `npm run example-env`; do not edit by hand.',
  '# Empty values count as unset. Set MODELGATE_ENV=dev|staging|prod to apply per-environment variants.',
  '',
  '# MODELGATE_ENV: dev, staging or prod (optional)',
  '# MODELGATE_ENV=',
  ...groups
    .filter(([, schema]) => Object.keys(schema).length > 0)
    .flatMap(([title, schema]) => ['', `# ---- ${title} ${'-'.repeat(Math.max(0, 90 - title.length))}`, '', Object.entries(schema).map(([name, spec]) => describe(name, spec)).join('\n\n')]),
  '',
  ].join('\n');
}

export const EXAMPLE_ENV_PATH = join(projectRoot, 'config', 'example.env');
