// The event catalogue: every event modelgate sends to webhooks and alert channels, with what its
// `data` holds as a JSON schema. Receivers code against these names and fields, so they are stable:
// a field may be added in a later release, never renamed or removed. docs/events.md is the same
// catalogue for operators; its test checks the two agree.
import { Ajv, type ValidateFunction } from 'ajv';
import type { EventMessage } from './types.js';
import { lazy } from '../../core/lazy-validator.js';

/** The bound of one message as sent (serialized JSON, bytes), whatever its data held. */
export const MAX_MESSAGE_BYTES = 20_000;
/** Longer strings in `data` are clipped to this many characters (UTF-16 units, never inside one). */
export const MAX_STRING_CHARS = 1_000;

const ISO_8601 = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$';

// Field documentation lives in the schema; the helpers keep each field one line.
const described = <S extends object>(schema: S, description: string) => ({ ...schema, description });
const text = (description: string) => described({ type: 'string', minLength: 1, maxLength: MAX_STRING_CHARS } as const, description);
const textOrNull = (description: string) => described({ type: ['string', 'null'], minLength: 1, maxLength: MAX_STRING_CHARS } as const, description);
const instant = (description: string) => described({ type: 'string', pattern: ISO_8601 } as const, description);
const instantOrNull = (description: string) => described({ type: ['string', 'null'], pattern: ISO_8601 } as const, description);
const count = (minimum: number, description: string) => described({ type: 'integer', minimum } as const, description);
const amount = (description: string) => described({ type: 'number', minimum: 0 } as const, description);
const oneOf = <V extends readonly string[]>(values: V, description: string) => described({ type: 'string', enum: values } as const, description);
const only = <V extends string>(value: V, description: string) => described({ type: 'string', const: value } as const, description);

const budget = {
  scope: oneOf(['global', 'key'] as const, "Whose budget: the gateway's (`global`) or one key's (`key`)."),
  key_id: textOrNull('The key whose budget it is; null for the global budget.'),
  period: oneOf(['day', 'week', 'month'] as const, 'The budget period: the UTC day, the ISO week or the UTC month.'),
  period_key: described({ type: 'string', pattern: '^\\d{4}-(\\d{2}-\\d{2}|W\\d{2}|\\d{2})$' } as const, 'The period it happened in: `2026-11-26`, `2026-W48` or `2026-11`.'),
  threshold: described({ type: 'number', exclusiveMinimum: 0 } as const, "The alert rule's threshold, a fraction of the limit (0.8 is 80%)."),
  action: oneOf(['email', 'chat', 'webhook', 'pause'] as const, "The alert rule's action."),
  spent_usd: amount('Spent in the period, USD.'),
  limit_usd: amount("The period's limit, USD."),
  resets_at: instant('When the period ends and the budget starts again.'),
};
const globalScope = only('global', 'Only the global budget pauses spending.');
const errorRate = {
  error_rate: described({ type: 'number', minimum: 0, maximum: 1 } as const, 'errors / requests over the window.'),
  threshold: described({ type: 'number', minimum: 0, maximum: 1 } as const, 'The error rate that raises the alert.'),
  requests: count(0, 'Requests in the window.'),
  errors: count(0, 'Of them, those that ended in an error.'),
  window_seconds: count(1, 'The window the rate is measured over, seconds.'),
};
const keyChange = {
  key_id: text('The key.'),
  name: textOrNull("The key's name."),
  expires_at: instantOrNull('When the key expires; null for never.'),
  by_key_id: textOrNull('The admin key that did it; null when no key did (a script, the key store itself).'),
};

/** Every event type, in the order docs/events.md lists them. */
export const EVENT_TYPES = [
  'budget.threshold_reached',
  'budget.threshold_resolved',
  'budget.exceeded',
  'budget.paused',
  'budget.resumed',
  'provider.circuit_opened',
  'provider.circuit_closed',
  'provider.down',
  'provider.recovered',
  'error_rate.high',
  'error_rate.resolved',
  'rate_limit.hit',
  'key.created',
  'key.regenerated',
  'key.revoked',
  'key.expiring_soon',
  'experiment.finished',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

interface Entry {
  description: string;
  alert: boolean;
  fields: Record<string, object>;
}

/** Per type: what happened (one line), whether it goes to the alert channels too, and its `data` fields. */
const CATALOGUE = {
  'budget.threshold_reached': {
    description: "Spend reached an alert rule's threshold of a budget.",
    alert: true,
    fields: {
      scope: budget.scope,
      key_id: budget.key_id,
      period: budget.period,
      period_key: budget.period_key,
      threshold: budget.threshold,
      action: budget.action,
      spent_usd: budget.spent_usd,
      limit_usd: budget.limit_usd,
      used_ratio: amount('spent_usd / limit_usd.'),
      resets_at: budget.resets_at,
    },
  },
  'budget.threshold_resolved': {
    description: 'A threshold reached before no longer holds: its period ended, or an admin resumed spending.',
    alert: true,
    fields: {
      scope: budget.scope,
      key_id: budget.key_id,
      period: budget.period,
      period_key: budget.period_key,
      threshold: budget.threshold,
      action: budget.action,
      reason: oneOf(['period_reset', 'admin_resume'] as const, 'Why: a new period began, or an admin resumed spending.'),
    },
  },
  'budget.exceeded': {
    description: 'A budget refused a request: it would have spent past the limit.',
    alert: true,
    fields: {
      scope: budget.scope,
      key_id: budget.key_id,
      period: budget.period,
      period_key: budget.period_key,
      spent_usd: budget.spent_usd,
      limit_usd: budget.limit_usd,
      resets_at: budget.resets_at,
    },
  },
  'budget.paused': {
    description: 'A `pause` rule fired: requests that would call a provider are refused.',
    alert: true,
    fields: { scope: globalScope, period: budget.period, period_key: budget.period_key, threshold: budget.threshold, until: instant('When spending resumes unless an admin resumes it sooner.') },
  },
  'budget.resumed': {
    description: 'Spending paused by a `pause` rule resumed.',
    alert: true,
    fields: { scope: globalScope, period: budget.period, period_key: budget.period_key, reason: oneOf(['admin', 'period_reset'] as const, 'An admin resumed it, or a new period began.') },
  },
  'provider.circuit_opened': {
    description: 'A provider failed often enough that its circuit opened: it gets no traffic for a while.',
    alert: false,
    fields: { provider: text('The provider.'), recovery_ms: count(0, 'How long until a probe request may close the circuit, ms.') },
  },
  'provider.circuit_closed': {
    description: 'A probe request succeeded and the circuit closed: the provider gets traffic again.',
    alert: false,
    fields: { provider: text('The provider.') },
  },
  'provider.down': {
    description: 'A provider failed repeatedly within the window.',
    alert: true,
    fields: {
      provider: text('The provider.'),
      failures: count(1, 'Failed calls in the window.'),
      window_seconds: count(1, 'The window, seconds.'),
      last_error: textOrNull("The last failure's message (secrets masked); null when there was none, as on a timeout."),
    },
  },
  'provider.recovered': {
    description: 'A provider reported down answers again.',
    alert: true,
    fields: { provider: text('The provider.'), down_since: instant('When it was reported down.') },
  },
  'error_rate.high': {
    description: "The gateway's error rate over the window rose to the threshold.",
    alert: true,
    fields: errorRate,
  },
  'error_rate.resolved': {
    description: 'The error rate fell back below the threshold.',
    alert: true,
    fields: errorRate,
  },
  'rate_limit.hit': {
    description: "A key's requests were refused by its rate limit: one event per key and minute.",
    alert: false,
    fields: { key_id: text('The key.'), minute: instant('The first instant of the minute (UTC).'), refused: count(1, 'Requests refused in that minute.') },
  },
  'key.created': { description: 'An API key was created.', alert: false, fields: keyChange },
  'key.regenerated': { description: "An API key's secret was replaced; the old secret no longer works.", alert: false, fields: keyChange },
  'key.revoked': { description: 'An API key was revoked.', alert: false, fields: keyChange },
  'key.expiring_soon': {
    description: 'An API key expires soon.',
    alert: true,
    fields: { key_id: keyChange.key_id, name: keyChange.name, expires_at: instant('When it expires.'), days_left: count(0, 'Whole days left.') },
  },
  'experiment.finished': {
    description: 'An A/B experiment finished.',
    alert: false,
    fields: {
      experiment_id: text('The experiment.'),
      name: text("The experiment's name."),
      reason: oneOf(['duration', 'decision', 'stopped', 'promoted'] as const, 'It reached its end date, its decision (with early stop on), an admin stopped it, or an admin promoted an arm.'),
      winner: textOrNull('The arm promoted, or the winner the decision named when it ended; null when none.'),
    },
  },
} as const satisfies { [T in EventType]: Entry };

type ValueOf<F> = F extends { const: infer C } ? C
  : F extends { enum: readonly (infer E)[] } ? E
  : F extends { type: readonly ['string', 'null'] } ? string | null
  : F extends { type: 'string' } ? string
  : F extends { type: 'number' | 'integer' } ? number
  : never;
/** The `data` of one type, as its schema describes it. */
export type EventData<T extends EventType> = { -readonly [K in keyof (typeof CATALOGUE)[T]['fields']]: ValueOf<(typeof CATALOGUE)[T]['fields'][K]> };

export const isEventType = (name: unknown): name is EventType => typeof name === 'string' && Object.hasOwn(CATALOGUE, name);
export const describeEvent = (type: EventType): string => CATALOGUE[type].description;
/** Alerts go to the alert channels (e-mail, chat, the alert webhook) as well as to webhooks. */
export const isAlert = (type: EventType): boolean => CATALOGUE[type].alert;

/** The JSON schema of one type's `data`: every field required, no other field. */
export function dataSchema(type: EventType): Record<string, unknown> {
  const fields = CATALOGUE[type].fields;
  return { type: 'object', additionalProperties: false, required: Object.keys(fields), properties: fields };
}

/** The JSON schema of a whole message of one type, as a webhook receives it. */
export function messageSchema(type: EventType): Record<string, unknown> {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: type,
    description: describeEvent(type),
    type: 'object',
    additionalProperties: false,
    required: ['type', 'timestamp', 'data'],
    properties: { type: { const: type }, timestamp: instant('When it happened.'), data: dataSchema(type) },
  };
}

// Made on the first message checked, not at every start.
const ajv = lazy(() => new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }));
const validators = new Map<EventType, ValidateFunction>();

/** What is wrong with a message (every problem, one line), or undefined when it matches its type's schema. */
export function validateMessage(message: unknown): string | undefined {
  const type = (message as { type?: unknown } | null)?.type;
  if (!isEventType(type)) return `message.type ${JSON.stringify(type) ?? 'undefined'} is not an event type of the catalogue`;
  let validate = validators.get(type);
  if (!validate) validators.set(type, (validate = ajv().compile(messageSchema(type))));
  return validate(message) ? undefined : ajv().errorsText(validate.errors, { dataVar: 'message' });
}

/** A string clipped to MAX_STRING_CHARS, never between the halves of a surrogate pair. */
function clip(value: unknown): unknown {
  if (typeof value === 'string') {
    if (value.length <= MAX_STRING_CHARS) return value;
    const end = /[\uD800-\uDBFF]/.test(value[MAX_STRING_CHARS - 1]!) ? MAX_STRING_CHARS - 1 : MAX_STRING_CHARS;
    return value.slice(0, end);
  }
  if (Array.isArray(value)) return value.map(clip);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clip(v)]));
  return value;
}

/**
 * The message for an event that happened `at`, its long strings clipped. Throws when it is still
 * over MAX_MESSAGE_BYTES (escaped control characters can take 6 bytes each): a bug in the emitter,
 * never something to send cut.
 */
export function eventMessage<T extends EventType>(type: T, data: EventData<T>, at: Date = new Date()): EventMessage {
  const message: EventMessage = { type, timestamp: at.toISOString(), data: clip(data) as Record<string, unknown> };
  const bytes = Buffer.byteLength(JSON.stringify(message));
  if (bytes > MAX_MESSAGE_BYTES) throw new RangeError(`A ${type} message is ${bytes} bytes, over the ${MAX_MESSAGE_BYTES}-byte bound`);
  return message;
}
