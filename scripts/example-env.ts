// Renders config/example.env from the settings schemas: every setting, its default and description,
// grouped by the part that declares it (settings-groups.ts). scripts/gen-example-env.ts writes it; a
// test fails when the committed file is stale.
import { join } from 'node:path';
import { projectRoot } from '../core/paths.js';
import { variantName, type SettingSpec } from '../core/settings.js';
import { SETTINGS_GROUPS, envText, typeLabel, type SettingsGroup } from './settings-groups.js';

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
  const facts: string[] = [`type: ${typeLabel(spec)}`];
  if ('enum' in spec && spec.enum) facts.push(`one of: ${spec.enum.join(', ')}`);
  if (spec.required) facts.push('required');
  if (spec.variants) facts.push(`per-environment: ${spec.variants.map((env) => variantName(name, env)).join(', ')}`);
  if (spec.envDefaults) facts.push(`defaults by MODELGATE_ENV: ${Object.entries(spec.envDefaults).map(([env, value]) => `${env}=${value}`).join(', ')}`);
  out.push(`# ${facts.join('; ')}`);
  const value = spec.example ?? (spec.default === undefined ? '' : envText(spec.default));
  out.push(spec.required ? `${name}=` : `# ${name}=${value}`);
  return out.join('\n');
}

/** The group's line in the file: core parts by the file that declares them. */
function title(group: SettingsGroup): string {
  switch (group.kind) {
    case 'core':
      return group.file!;
    case 'pipeline':
      return `pipeline step: ${group.name}`;
    case 'provider':
      return `provider: ${group.name}`;
  }
}

export function renderExampleEnv(): string {
  return [
  '# modelgate configuration: every setting the gateway reads, with its default.',
  '# Generated from the settings schemas by `npm run example-env`; do not edit by hand.',
  '# A template: copy it to .env, fill it in, and start with `node --env-file=.env scripts/launch.mjs server`.',
  '# Empty values count as unset. Set MODELGATE_ENV=dev|staging|prod to apply per-environment variants.',
  '',
  '# MODELGATE_ENV: dev, staging or prod (optional)',
  '# MODELGATE_ENV=',
  ...SETTINGS_GROUPS
    .filter((group) => Object.keys(group.schema).length > 0)
    .flatMap((group) => {
      const heading = title(group);
      return ['', `# ---- ${heading} ${'-'.repeat(Math.max(0, 90 - heading.length))}`, '', Object.entries(group.schema).map(([name, spec]) => describe(name, spec)).join('\n\n')];
    }),
  '',
  ].join('\n');
}

export const EXAMPLE_ENV_PATH = join(projectRoot, 'config', 'example.env');
