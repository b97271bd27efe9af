// The event catalogue: every type has a description and a strict schema of its data, a message is
// checked against it, eventMessage keeps a message under its bound, and docs/events.md lists every
// type with examples that match the schemas (so the docs cannot go stale).
import t from 'tap';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { Webhook } from 'standardwebhooks';
import { projectRoot } from '../../core/paths.js';
import { ACTIONS } from '../../plugins/cost/alerts.js';
import { PERIODS } from '../../plugins/cost/periods.js';
import {
  EVENT_TYPES,
  MAX_MESSAGE_BYTES,
  MAX_STRING_CHARS,
  dataSchema,
  describeEvent,
  eventMessage,
  isAlert,
  isEventType,
  messageSchema,
  validateMessage,
  type EventData,
  type EventType,
} from '../../plugins/events/catalogue.js';

const AT = '2026-11-26T14:03:12.481Z';
const key = { key_id: 'key_1', name: 'billing', expires_at: null, by_key_id: 'key_admin' };
const rate = { error_rate: 0.12, threshold: 0.05, requests: 100, errors: 12, window_seconds: 300 };
const SAMPLES: { [T in EventType]: EventData<T> } = {
  'budget.threshold_reached': { scope: 'global', key_id: null, period: 'day', period_key: '2026-11-26', threshold: 0.8, action: 'chat', spent_usd: 80, limit_usd: 100, used_ratio: 0.8, resets_at: '2026-11-27T00:00:00.000Z' },
  'budget.threshold_resolved': { scope: 'key', key_id: 'key_1', period: 'week', period_key: '2026-W48', threshold: 0.5, action: 'email', reason: 'period_reset' },
  'budget.exceeded': { scope: 'key', key_id: 'key_1', period: 'month', period_key: '2026-11', spent_usd: 50, limit_usd: 50, resets_at: '2026-12-01T00:00:00Z' },
  'budget.paused': { scope: 'global', period: 'day', period_key: '2026-11-26', threshold: 1, until: '2026-11-27T00:00:00.000Z' },
  'budget.resumed': { scope: 'global', period: 'day', period_key: '2026-11-26', reason: 'admin' },
  'provider.circuit_opened': { provider: 'openai', recovery_ms: 30_000 },
  'provider.circuit_closed': { provider: 'openai' },
  'provider.down': { provider: 'anthropic', failures: 12, window_seconds: 60, last_error: null },
  'provider.recovered': { provider: 'anthropic', down_since: AT },
  'error_rate.high': rate,
  'error_rate.resolved': { ...rate, error_rate: 0.01, errors: 1 },
  'rate_limit.hit': { key_id: 'key_1', minute: '2026-11-26T14:06:00.000Z', refused: 3 },
  'key.created': key,
  'key.regenerated': { ...key, expires_at: '2027-01-01T00:00:00+01:00' },
  'key.revoked': { ...key, name: null, by_key_id: null },
  'key.expiring_soon': { key_id: 'key_1', name: null, expires_at: '2026-12-01T00:00:00.000Z', days_left: 4 },
  'experiment.finished': { experiment_id: 'exp_1', name: 'mini vs haiku', reason: 'promoted', winner: 'gpt-4o-mini' },
};
const ALERTS = [
  'budget.threshold_reached',
  'budget.threshold_resolved',
  'budget.exceeded',
  'budget.paused',
  'budget.resumed',
  'provider.down',
  'provider.recovered',
  'error_rate.high',
  'error_rate.resolved',
  'key.expiring_soon',
];

const message = (type: string, data: unknown) => ({ type, timestamp: AT, data });
type Schema = { type: string; additionalProperties: boolean; required: string[]; properties: Record<string, { description?: string }> };

t.test('every type has a one-line description, an alert flag and a strict schema of its data', async (t) => {
  t.equal(new Set(EVENT_TYPES).size, EVENT_TYPES.length, 'no name twice');
  for (const type of EVENT_TYPES) {
    t.match(type, /^[a-z_]+\.[a-z_]+$/, `${type}: a dotted snake_case name`);
    t.match(describeEvent(type), /^[^\n]{10,200}$/, `${type}: described in one line`);
    const schema = dataSchema(type) as Schema;
    t.equal(schema.additionalProperties, false, `${type}: no other field`);
    t.same(schema.required, Object.keys(schema.properties), `${type}: every field required`);
    for (const [field, property] of Object.entries(schema.properties)) t.ok(property.description, `${type}.${field} is described`);
  }
  t.same(EVENT_TYPES.filter(isAlert), ALERTS, 'the alerts are the budget, provider down/recovered, error-rate and expiring-key events');
  t.ok(isEventType('key.created'));
  t.notOk(isEventType('key.deleted'));
  t.notOk(isEventType('toString'), 'no inherited name');
});

t.test("budget events name the cost guard's actions and periods", async (t) => {
  const fields = (dataSchema('budget.threshold_reached') as { properties: Record<string, { enum: string[] }> }).properties;
  t.same(fields.action!.enum, ACTIONS);
  t.same(fields.period!.enum, PERIODS);
});

t.test('a message schema is a draft-07 schema a strict ajv compiles', async (t) => {
  for (const type of EVENT_TYPES) {
    const schema = messageSchema(type);
    t.equal(schema.$schema, 'http://json-schema.org/draft-07/schema#');
    const validate = new Ajv({ strict: true, allowUnionTypes: true }).compile(schema);
    t.ok(validate(message(type, SAMPLES[type])), `${type} sample`);
  }
});

t.test('a valid message of every type passes', async (t) => {
  for (const type of EVENT_TYPES) t.equal(validateMessage(message(type, SAMPLES[type])), undefined, type);
});

t.test('a wrong, an extra or a missing field fails, naming it', async (t) => {
  for (const type of EVENT_TYPES) {
    const sample = SAMPLES[type] as Record<string, unknown>;
    const [first, ...rest] = Object.keys(sample) as [string, ...string[]];
    t.match(validateMessage(message(type, { ...sample, [first]: { nested: true } })), `message/data/${first}`, `${type}: ${first} of the wrong type`);
    t.match(validateMessage(message(type, { ...sample, surprise: 1 })), 'must NOT have additional properties', `${type}: an extra field`);
    const missing = rest.at(-1) ?? first;
    const { [missing]: _, ...without } = sample;
    t.match(validateMessage(message(type, without)), `must have required property '${missing}'`, `${type}: ${missing} missing`);
  }
  const reached = SAMPLES['budget.threshold_reached'];
  t.ok(validateMessage(message('budget.threshold_reached', { ...reached, action: 'sms' })), 'a value outside the enum');
  t.ok(validateMessage(message('budget.threshold_reached', { ...reached, period_key: 'today' })), 'a period key of no period');
  t.ok(validateMessage(message('budget.threshold_reached', { ...reached, resets_at: 'tomorrow' })), 'a time that is not ISO 8601');
  t.ok(validateMessage(message('budget.paused', { ...SAMPLES['budget.paused'], scope: 'key' })), 'only the global budget pauses');
  t.ok(validateMessage(message('rate_limit.hit', { ...SAMPLES['rate_limit.hit'], refused: 1.5 })), 'a count that is not an integer');
  t.ok(validateMessage(message('provider.down', { ...SAMPLES['provider.down'], last_error: 'x'.repeat(MAX_STRING_CHARS + 1) })), 'a string over the clip length');
});

t.test('a message of no known type, or of the wrong shape, fails', async (t) => {
  t.match(validateMessage(message('key.deleted', {})), 'not an event type');
  t.match(validateMessage(null), 'not an event type');
  t.match(validateMessage('key.created'), 'not an event type');
  const sample = SAMPLES['key.created'];
  t.match(validateMessage({ type: 'key.created', data: sample }), "must have required property 'timestamp'");
  t.match(validateMessage({ ...message('key.created', sample), timestamp: 'now' }), 'message/timestamp');
  t.match(validateMessage({ ...message('key.created', sample), id: 'x' }), 'must NOT have additional properties');
});

t.test('eventMessage stamps the time, clips long strings and refuses a message over the bound', async (t) => {
  const down = eventMessage('provider.down', { provider: 'anthropic', failures: 3, window_seconds: 60, last_error: 'e'.repeat(5_000) }, new Date(AT));
  t.equal(down.timestamp, AT);
  t.equal(down.type, 'provider.down');
  t.equal((down.data.last_error as string).length, MAX_STRING_CHARS);
  t.equal(validateMessage(down), undefined, 'a clipped message is valid');
  t.match(eventMessage('provider.down', { ...SAMPLES['provider.down'] }).timestamp, /^\d{4}-\d{2}-\d{2}T/, 'now by default');

  const emoji = eventMessage('provider.down', { ...SAMPLES['provider.down'], last_error: 'a' + '😀'.repeat(1_000) });
  t.equal((emoji.data.last_error as string).length, MAX_STRING_CHARS - 1, 'never between the halves of an emoji');
  t.notOk((emoji.data.last_error as string).endsWith('\uD83D'));

  // Escaped control characters take 6 bytes each: four clipped strings of them pass 20,000 bytes.
  const control = '\u0001'.repeat(MAX_STRING_CHARS);
  t.throws(() => eventMessage('key.created', { key_id: control, name: control, expires_at: control, by_key_id: control }), RangeError);
  const bytes = Buffer.byteLength(JSON.stringify(eventMessage('key.created', { key_id: control, name: control, expires_at: null, by_key_id: control })));
  t.ok(bytes <= MAX_MESSAGE_BYTES, `three of them fit (${bytes} bytes)`);
});

const docs = readFileSync(join(projectRoot, 'docs/events.md'), 'utf8');
const sections = docs.split(/^### /m).slice(1);

t.test('docs/events.md has a section for every type, its fields as the schema has them', async (t) => {
  for (const type of EVENT_TYPES) {
    t.ok(docs.includes(`\`${type}\``), `${type} is mentioned`);
    const section = sections.find((s) => s.startsWith(`\`${type}\`\n`));
    if (!section) {
      t.fail(`${type} has no section`);
      continue;
    }
    const fields = [...section.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]);
    t.same(fields, (dataSchema(type) as Schema).required, `${type}: the fields table lists the schema's fields`);
    t.match(section, /\*\*How often:\*\*/, `${type}: says how often`);
  }
  for (const line of docs.split('\n').filter((l) => /^\| \[`[a-z_.]+`\]/.test(l))) {
    const [, type, alert] = /^\| \[`([a-z_.]+)`\]\(#[a-z_]+\) \| (yes|no) \|/.exec(line) ?? [];
    t.ok(type && isEventType(type), `the summary row of ${type ?? line} names a type`);
    if (type && isEventType(type)) t.equal(alert === 'yes', isAlert(type), `${type}: alert column`);
  }
});

t.test('every JSON example in docs/events.md is a valid message, and every type has one', async (t) => {
  const examples = [...docs.matchAll(/^```json\n([\s\S]*?)^```$/gm)].map((m) => JSON.parse(m[1]!) as { type: string });
  const shown = new Set<string>();
  for (const example of examples) {
    t.equal(validateMessage(example), undefined, `the ${example.type} example`);
    shown.add(example.type);
  }
  t.same(EVENT_TYPES.filter((type) => !shown.has(type)), [], 'no type without an example');
});

t.test('the signature docs/events.md describes is the one standardwebhooks verifies', async (t) => {
  const body = JSON.stringify(eventMessage('key.created', SAMPLES['key.created']));
  const id = 'msg_2Lq1';
  const timestamp = String(Math.floor(Date.now() / 1000));
  const sign = (key: Buffer) => `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
  const raw = 'sécret-not-base64';
  const whsec = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
  const headers = (signature: string) => ({ 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature });

  t.same(new Webhook(Buffer.from(raw, 'utf8'), { format: 'raw' }).verify(body, headers(sign(Buffer.from(raw, 'utf8')))), JSON.parse(body), 'a raw secret: its UTF-8 bytes as the key');
  t.throws(() => new Webhook(raw, { format: 'raw' }).verify(body, headers(sign(Buffer.from(raw, 'utf8')))), 'a non-ASCII raw secret passed as a string is not that key');
  t.throws(() => new Webhook(Buffer.from(raw, 'utf8')), 'bytes without format raw are refused');
  const key = Buffer.from(whsec.slice('whsec_'.length), 'base64');
  t.ok(new Webhook(whsec).verify(body, headers(sign(key))), 'a whsec_ secret: the bytes its base64 decodes to');
  t.ok(new Webhook(whsec).verify(body, headers(`v1,${Buffer.alloc(32).toString('base64')} ${sign(key)}`)), 'any signature of a rotating list');
});
