// Renders docs/configuration.md from the settings schemas: how settings load, then every setting
// with its default, bounds, per-environment variants and description, grouped by the part that owns
// it (settings-groups.ts, shared with config/example.env). scripts/gen-config-doc.ts writes it; a
// test fails when the committed file and the schemas disagree.
import { join } from 'node:path';
import { projectRoot } from '../core/paths.js';
import { ENVIRONMENTS, variantName, type SettingSpec } from '../core/settings.js';
import { headingAnchor } from './markdown-anchor.js';
import { SETTINGS_GROUPS, envText, typeLabel, type GroupKind, type SettingsGroup } from './settings-groups.js';

export const CONFIG_DOC_PATH = join(projectRoot, 'docs', 'configuration.md');

/** Where each part's behaviour is explained (relative to docs/). */
const SEE_ALSO: Record<string, string> = {
  Server: 'operations.md',
  Logging: 'operations.md#logs',
  'Model catalog': 'catalog.md',
  Redis: 'storage.md',
  'Database and retention': 'storage.md',
  'Stored responses': 'api.md',
  'Request records and data protection': 'security.md#request-records',
  metrics: 'operations.md#metrics',
  events: 'events.md#delivery',
  'ip-filter': 'security.md#ip-filter-and-trusted-proxies',
  keys: 'security.md#keys-of-the-admin-api',
  auth: 'security.md#api-keys',
  'chat-body': 'security.md#request-bounds',
  'rate-limit': 'limits-and-money.md#rate-limits',
  'cost-guard': 'limits-and-money.md#cost-guard',
  cache: 'cache.md',
  router: 'routing.md',
  failover: 'routing.md#failover',
  experiments: 'experiments.md',
  dashboard: 'dashboard.md',
  openai: 'providers/openai-compatible.md',
  anthropic: 'providers/anthropic.md',
  google: 'providers/google.md',
  cohere: 'providers/cohere.md',
  mistral: 'providers/mistral.md',
  custom: 'providers/openai-compatible.md',
};

const SECTIONS: Array<{ kind: GroupKind; title: string; intro: string }> = [
  { kind: 'core', title: 'Core', intro: 'Settings of the core itself: where it listens and keeps its state, its logs, the catalog, Redis and the database.' },
  {
    kind: 'pipeline',
    title: 'Pipeline steps',
    intro:
      'In the order a chat request meets them (`chat-body` is core\'s own step: it reads and validates the body; `metrics` only observes). A step with nothing to check adds no work to the request path.',
  },
  { kind: 'provider', title: 'Providers', intro: 'A provider is configured — it can be routed to — when its API key is set; `custom` when its base URL is set.' },
];

const INTRO = `# Configuration

<!-- Generated from the settings schemas by \`npm run config-doc\`; do not edit by hand. A test fails when this file and the schemas disagree. -->

Every setting is an environment variable. This page and [\`config/example.env\`](../config/example.env)
(a template to copy and fill in) are both generated from the settings schemas each part of the
gateway declares beside its code, so they list exactly what the gateway reads.

## How settings load

- **From the environment only.** The gateway reads its process environment and no file. To keep
  settings in a \`.env\` file (\`config/example.env\` is a valid start), let Node load it:
  \`node --env-file=.env scripts/launch.mjs server\` (Node 20.12 or newer; \`demo\` and \`migrate\`
  in place of \`server\` work the same way). \`npm start -- --env-file=.env\` does not: the flag
  reaches the launcher as an argument, not Node, and Node 20 refuses \`--env-file\` in
  \`NODE_OPTIONS\`. In Docker, \`docker run --env-file .env\` does the same job.
- **Empty means unset.** \`MODELGATE_CACHE_TTL=\` leaves the default in place. Values are trimmed.
- **Types.** Numbers are parsed (integers must be whole); booleans are \`true\` or \`false\` (\`1\`/\`0\`
  and \`yes\`/\`no\` are accepted too); lists are comma-separated, blank items dropped; JSON objects
  are parsed.
- **Per environment.** \`MODELGATE_ENV\` is \`dev\`, \`staging\` or \`prod\` (unset: none). When it is
  set, a setting that has variants for that environment takes the first of: its variant
  (\`MODELGATE_PROD_DAILY_COST_LIMIT\`, \`OPENAI_DEV_API_KEY\`), its plain name, the environment's
  typical value (\`MODELGATE_ENV=dev\` caps a request at $0.001), the built-in default. Which settings
  have variants: [Per-environment variants](#per-environment-variants).
- **Validated at boot, all at once.** Before the database is opened or the port taken, every
  setting is checked; on any problem the gateway prints one message naming every bad variable and
  why, and exits with status 1. Values of secret settings are never echoed.

  \`\`\`
  modelgate: Invalid configuration:
    - MODELGATE_CACHE_TTL: must be an integer (got "soon")
    - MODELGATE_API_KEY: is required (missing or empty)
    - MODELGATE_PORT: must be <= 65535 (got "70000")
  \`\`\`

  What a schema cannot check — IP ranges, provider names in \`MODELGATE_PROVIDER_WEIGHTS\`, the
  catalog file — is checked while the gateway assembles, still before it listens, with the same
  exit status.
- **Typos are reported.** A \`MODELGATE_*\` variable that no part declares is logged at boot as
  \`unknown setting ignored (typo?)\`.

Not settings of the gateway, so not listed below: \`DEMO_FAILURE_RATE\` (default 0.05) and
\`DEMO_SPEED\` (default 1; 0 removes the simulated latency) tune \`npm run demo\`;
\`MODELGATE_TEST_DATABASE_URL\` points the tests at another PostgreSQL.`;

/** Text for a Markdown table cell: setting names in code, no `|` breaking the row, no `<…>` read as HTML. */
function cell(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) => {
      if (i % 2 === 1) return part.replace(/\|/g, '\\|');
      return part
        .replace(/\|/g, '\\|')
        .replace(/</g, '&lt;')
        .replace(/>/g, '&gt;')
        .replace(/(?<![\w`])_?[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*(?:_[A-Z0-9]+|_\*)/g, (name) => `\`${name}\``);
    })
    .join('');
}

function bounds(spec: SettingSpec): string | undefined {
  if (spec.type === 'integer' || spec.type === 'number') {
    const { minimum, maximum, exclusiveMinimum } = spec;
    if (exclusiveMinimum !== undefined) return `more than ${exclusiveMinimum}`;
    if (minimum !== undefined && maximum !== undefined) return `${minimum} to ${maximum}`;
    if (minimum !== undefined) return `at least ${minimum}`;
    if (maximum !== undefined) return `at most ${maximum}`;
    return undefined;
  }
  if (spec.type === 'string') {
    if (spec.enum) return `one of ${spec.enum.map((value) => `\`${value}\``).join(', ')}`;
    if (spec.hint) return `must ${spec.hint}`;
    if (spec.pattern) return `must match \`${spec.pattern}\``;
  }
  if (spec.type === 'array') {
    if (spec.hint) return `must ${spec.hint}`;
    if (spec.items?.pattern) return `each must match \`${spec.items.pattern}\``;
  }
  return undefined;
}

function defaultCell(spec: SettingSpec): string {
  if (spec.required) return 'required';
  if (spec.default === undefined) return 'unset';
  const text = envText(spec.default);
  return text === '' ? 'empty' : `\`${text}\``;
}

function facts(name: string, spec: SettingSpec): string {
  const limit = bounds(spec);
  const out = [`${typeLabel(spec)[0]!.toUpperCase()}${typeLabel(spec).slice(1)}${limit ? `, ${limit}` : ''}.`];
  if (spec.secret) out.push('Secret: boot errors never show its value.');
  if (spec.variants) out.push(`Per environment: ${spec.variants.map((env) => `\`${variantName(name, env)}\``).join(', ')}.`);
  if (spec.envDefaults) out.push(`Under \`MODELGATE_ENV\`: ${Object.entries(spec.envDefaults).map(([env, value]) => `${env} \`${value}\``).join(', ')}.`);
  return out.join(' ');
}

function table(group: SettingsGroup): string[] {
  return [
    '| Setting | Default | Meaning |',
    '|---|---|---|',
    ...Object.entries(group.schema).map(([name, spec]) => `| \`${name}\` | ${defaultCell(spec)} | ${cell(spec.description)} *${facts(name, spec)}* |`),
  ];
}

function groupSection(group: SettingsGroup, level: string, note = ''): string[] {
  const heading = group.kind === 'core' ? group.name : `\`${group.name}\``;
  const where = group.file ? `Declared in \`${group.file}\`. ` : '';
  const seeAlso = SEE_ALSO[group.name];
  if (!seeAlso) throw new Error(`config-doc: no page explains the settings of ${group.name}`);
  const page = seeAlso.replace(/^\.\.\//, '').replace(/#.*/, '');
  return ['', `${level} ${heading}`, '', `${note}${where}More in [${page}](${seeAlso}).`, '', ...table(group)];
}

function contents(): string[] {
  const lines = ['', '## Contents', ''];
  for (const section of SECTIONS) {
    lines.push(`- [${section.title}](#${headingAnchor(section.title)}): ${SETTINGS_GROUPS.filter((g) => g.kind === section.kind).map((g) => `[${g.kind === 'core' ? g.name : `\`${g.name}\``}](#${headingAnchor(g.name)})`).join(', ')}`);
  }
  lines.push('- [Per-environment variants](#per-environment-variants)');
  return lines;
}

function variantsTable(): string[] {
  const rows = SETTINGS_GROUPS.flatMap((group) =>
    Object.entries(group.schema)
      .filter(([, spec]) => spec.variants)
      .map(([name, spec]) => {
        const typical = ENVIRONMENTS.map((env) => (spec.envDefaults?.[env] === undefined ? '' : `\`${spec.envDefaults[env]}\``));
        return `| \`${name}\` | ${spec.variants!.map((env) => `\`${variantName(name, env)}\``).join(', ')} | ${typical.join(' | ')} |`;
      }),
  );
  return [
    '',
    '## Per-environment variants',
    '',
    'With `MODELGATE_ENV` set, these settings also read a variant named for the environment, which wins over the plain name. Where a typical value is given, it applies when neither the variant nor the plain name is set.',
    '',
    `| Setting | Variants | ${ENVIRONMENTS.map((env) => `Typical in ${env}`).join(' | ')} |`,
    `|---|---|${ENVIRONMENTS.map(() => '---').join('|')}|`,
    ...rows,
  ];
}

export function renderConfigDoc(): string {
  const lines = [INTRO, ...contents()];
  for (const section of SECTIONS) {
    lines.push('', `## ${section.title}`, '', section.intro);
    for (const group of SETTINGS_GROUPS.filter((g) => g.kind === section.kind)) lines.push(...groupSection(group, '###'));
  }
  lines.push(...variantsTable(), '');
  return lines.join('\n');
}
