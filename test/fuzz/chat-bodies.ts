// Hostile chat-completion bodies: a valid request with one to three of its parts replaced — any
// field by any JSON value, messages of every role and content-part shape, tools and
// response_format with hostile JSON Schemas, `modelgate` overrides, model names, unknown and
// polluting keys — or no request at all. Each case says in words what it changed.
import type { Prng } from './prng.js';
import { arrayText, hostileString, hostileValue, nested, objectText, POLLUTING_KEYS, str, type ValueLimits } from './json-text.js';

export interface BodyOptions extends ValueLimits {
  /** Long model names from a small fixed set, not a new one per case (a known defect retains each). */
  repeatLongModelNames: boolean;
}

export interface GeneratedBody {
  text: string;
  what: string[];
}

const TOP_FIELDS = [
  'model', 'messages', 'temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'n', 'stream', 'stream_options', 'stop', 'seed',
  'user', 'tools', 'tool_choice', 'parallel_tool_calls', 'response_format', 'presence_penalty', 'frequency_penalty', 'modelgate',
  'logit_bias', 'logprobs', 'top_logprobs', 'metadata', 'store', 'reasoning_effort', 'service_tier', 'functions', 'function_call',
];

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function', '', 'USER', 'admin', 'model', '__proto__'];

const FIXED_LONG_NAMES = ['m'.repeat(10_000), 'openai/' + 'x'.repeat(50_000), '模'.repeat(20_000), 'a/'.repeat(30_000)];

/** A model name: long, unicode, slashes, `..`, control characters, provider prefixes, JS keys. */
export function modelName(rng: Prng, options: BodyOptions): string {
  switch (rng.int(0, 5)) {
    case 0:
      return rng.pick(['gpt-4o-mini', 'auto', 'AUTO', 'openai/gpt-4o-mini', 'anthropic/claude-sonnet-4-5', 'claude-sonnet-4-5', 'gemini-2.5-flash', 'mystery-1']);
    case 1:
      return rng.pick(['', ' ', '/', '//', '..', '../gpt-4o-mini', 'openai/../anthropic/claude-sonnet-4-5', 'openai/', '/gpt-4o-mini', 'openai//gpt-4o-mini', 'custom/x']);
    case 2:
      return rng.pick(['gpt-4o-mini\u0000', 'gpt-4o-mini\r\nx-injected: 1', '\u001b[2J', 'gpt\u202e', '\ufeffgpt-4o-mini', 'gpt-4o-mini ', '\tauto']);
    case 3:
      return rng.pick([...POLLUTING_KEYS, 'openai/__proto__', '__proto__/gpt-4o-mini', 'constructor/prototype', 'hasOwnProperty/x']);
    case 4:
      return rng.pick(['模型', 'openai/模型', '😀/😀', 'ｇｐｔ-４ｏ', 'gpt‐4o‐mini', 'Gpt-4O-Mini']);
    default: {
      if (options.repeatLongModelNames) return rng.pick(FIXED_LONG_NAMES);
      // A new long name each time: whatever keeps state per model name must stay bounded.
      const unit = rng.pick(['a', 'openai/', '模', '😀', '../']);
      return `${unit.repeat(rng.size(100, 20_000))}-${rng.int(0, 2 ** 31)}`;
    }
  }
}

function textPart(rng: Prng, limits: ValueLimits): string {
  return objectText([['type', str('text')], ['text', rng.chance(0.7) ? hostileString(rng, limits) : hostileValue(rng, limits)]]);
}

/** A content part of any shape the schema knows, and some it does not. */
function contentPart(rng: Prng, limits: ValueLimits): string {
  const any = () => hostileValue(rng, limits, 2);
  switch (rng.int(0, 7)) {
    case 0:
      return textPart(rng, limits);
    case 1:
      return objectText([['type', str('image_url')], ['image_url', objectText([['url', rng.chance(0.5) ? str(rng.pick(['data:image/png;base64,', 'data:;base64,' + 'A'.repeat(rng.size(1, 50_000)), 'javascript:alert(1)', 'file:///etc/passwd', 'http://169.254.169.254/latest/meta-data/', 'https://x/a.png'])) : any()], ['detail', rng.chance(0.5) ? str(rng.pick(['low', 'high', 'auto', 'LOW', ''])) : any()]])]]);
    case 2:
      return objectText([['type', str('input_audio')], ['input_audio', rng.chance(0.5) ? objectText([['data', str('UklG'.repeat(rng.size(1, 20_000)))], ['format', str(rng.pick(['wav', 'mp3', 'ogg', '']))]]) : any()]]);
    case 3:
      return objectText([['type', str('file')], ['file', rng.chance(0.5) ? objectText([[rng.pick(['file_data', 'file_id', 'filename']), any()]]) : any()]]);
    case 4:
      return objectText([['type', str(rng.pick(['image', 'audio', 'video', 'tool_result', 'refusal', '', 'TEXT']))], [rng.pick(['text', 'data', 'source']), any()]]);
    case 5:
      return objectText([['text', any()]]);
    default:
      return any();
  }
}

function content(rng: Prng, limits: ValueLimits): string {
  switch (rng.int(0, 4)) {
    case 0:
      return hostileString(rng, limits);
    case 1:
      return rng.pick(['null', '[]', '""', '{}']);
    case 2:
    case 3:
      return arrayText(Array.from({ length: rng.size(1, 12) }, () => contentPart(rng, limits)));
    default:
      return hostileValue(rng, limits);
  }
}

/** A message of any role, with the fields that role uses (or others'), valued anyhow. */
export function message(rng: Prng, limits: ValueLimits): string {
  const entries: Array<[string, string]> = [['role', rng.chance(0.85) ? str(rng.pick(ROLES)) : hostileValue(rng, limits)]];
  if (rng.chance(0.9)) entries.push(['content', content(rng, limits)]);
  if (rng.chance(0.2)) entries.push(['name', rng.chance(0.5) ? hostileString(rng, limits) : hostileValue(rng, limits)]);
  if (rng.chance(0.2)) entries.push(['tool_call_id', rng.chance(0.5) ? str(rng.pick(['', 'call_1', 'x'.repeat(10_000)])) : hostileValue(rng, limits)]);
  if (rng.chance(0.2)) {
    const call = objectText([['id', hostileString(rng, limits)], ['type', str('function')], ['function', objectText([['name', hostileString(rng, limits)], ['arguments', rng.chance(0.5) ? str(rng.pick(['{', '{}', '[]', 'null', '{"a":'.repeat(100)])) : hostileValue(rng, limits)]])]]);
    entries.push(['tool_calls', rng.chance(0.7) ? arrayText([call]) : hostileValue(rng, limits)]);
  }
  if (rng.chance(0.1)) entries.push([rng.pick([...POLLUTING_KEYS, 'refusal', 'audio', 'extra']), hostileValue(rng, limits)]);
  return objectText(entries);
}

/** A JSON Schema meant to hurt whoever compiles, walks or translates it. */
export function hostileSchema(rng: Prng, limits: ValueLimits): string {
  switch (rng.int(0, 9)) {
    case 0:
      return '{"$ref":"#"}';
    case 1:
      return '{"type":"object","properties":{"a":{"$ref":"#"}},"$defs":{"x":{"$ref":"#/$defs/x"}},"allOf":[{"$ref":"#/$defs/x"}]}';
    case 2:
      return `{"type":"string","pattern":${str(rng.pick(['(a+)+$', '([a-zA-Z]+)*$', '(', '\\', '[', '(?<=x)', '\\p{L}']))}}`;
    case 3:
      return `{"enum":${arrayText(Array.from({ length: rng.size(1, 5000) }, (_, i) => str(`v${i}`)))}}`;
    case 4:
      return `{"type":${str(rng.pick(['banana', 'null', 'integer', '', 'object ']))},"properties":${hostileValue(rng, limits, 1)}}`;
    case 5: {
      const depth = rng.size(1, limits.maxDepth);
      return '{"type":"object","properties":{"a":'.repeat(depth) + '{}' + '}}'.repeat(depth);
    }
    case 6:
      return objectText([['type', str('object')], ['properties', objectText(POLLUTING_KEYS.map((key) => [key, '{"type":"string"}'] as const))], ['required', arrayText(POLLUTING_KEYS.map(str))]]);
    case 7:
      return objectText([['anyOf', arrayText(Array.from({ length: rng.size(1, 200) }, () => '{"type":"object","additionalProperties":false}'))], ['not', '{}'], ['if', '{}'], ['then', 'false'], ['else', 'true']]);
    case 8:
      return nested(rng, rng.size(1, limits.maxDepth));
    default:
      return hostileValue(rng, limits);
  }
}

function tools(rng: Prng, limits: ValueLimits): string {
  const tool = () =>
    rng.chance(0.8)
      ? objectText([
          ['type', rng.chance(0.8) ? str('function') : hostileValue(rng, limits)],
          ['function', objectText([['name', rng.chance(0.5) ? str(rng.pick(['get_weather', 'a'.repeat(64), 'a'.repeat(65), '', 'bad name', '__proto__'])) : hostileValue(rng, limits)], ['description', hostileString(rng, limits)], ['parameters', hostileSchema(rng, limits)], ['strict', hostileValue(rng, limits)]])],
        ])
      : hostileValue(rng, limits);
  return arrayText(Array.from({ length: rng.size(1, 20) }, tool));
}

function responseFormat(rng: Prng, limits: ValueLimits): string {
  switch (rng.int(0, 3)) {
    case 0:
      return objectText([['type', str('json_schema')], ['json_schema', objectText([['name', hostileString(rng, limits)], ['schema', hostileSchema(rng, limits)], ['strict', hostileValue(rng, limits)]])]]);
    case 1:
      return objectText([['type', str(rng.pick(['json_object', 'text', 'json_schema', 'xml', '']))]]);
    case 2:
      return objectText([['type', str('json_schema')], ['json_schema', hostileValue(rng, limits)]]);
    default:
      return hostileValue(rng, limits);
  }
}

/** The body's `modelgate` object: real override names with hostile values, unknown and polluting keys. */
export function overrides(rng: Prng, limits: ValueLimits): string {
  const fields: Record<string, string[]> = {
    routing: ['strategy', 'max_cost_per_request', 'quality_threshold', 'response_time_limit'],
    failover: ['enabled', 'fallback_providers', 'fallback_models', 'retry_attempts'],
    retry: ['retry_attempts', 'retry_delay', 'retry_delay_multiplier', 'exponential_backoff'],
    cache: ['enabled'],
  };
  const value = () =>
    rng.chance(0.5)
      ? rng.pick(['-1', '0', '1e999', '1e9', '9007199254740993', '0.5', 'true', '"cost_optimized"', '"quality_optimized"', '["openai","__proto__"]', '["anthropic/claude-sonnet-4-5"]', '[]', '["' + 'x'.repeat(5000) + '"]'])
      : hostileValue(rng, limits);
  const entries: Array<[string, string]> = [];
  for (let i = rng.size(1, 4); i > 0; i--) {
    const name = rng.chance(0.8) ? rng.pick(Object.keys(fields)) : rng.pick([...POLLUTING_KEYS, 'unknown', '']);
    const names = fields[name] ?? POLLUTING_KEYS;
    entries.push([name, rng.chance(0.85) ? objectText(Array.from({ length: rng.size(1, 3) }, () => [rng.chance(0.9) ? rng.pick(names) : rng.pick(POLLUTING_KEYS), value()] as const)) : hostileValue(rng, limits)]);
  }
  return objectText(entries);
}

/** A chat body: a valid request with one to three hostile replacements, or no request at all. */
export function chatBody(rng: Prng, options: BodyOptions): GeneratedBody {
  if (rng.chance(0.05)) {
    const text = hostileValue(rng, options);
    return { text, what: ['the whole body is another JSON value'] };
  }
  const fields = new Map<string, string>([
    ['model', str('gpt-4o-mini')],
    ['messages', arrayText([objectText([['role', str('user')], ['content', str('Say hi')]])])],
    ['max_tokens', '8'],
  ]);
  const extra: Array<[string, string]> = [];
  const what: string[] = [];
  for (let i = rng.size(1, 3); i > 0; i--) {
    switch (rng.int(0, 9)) {
      case 0:
      case 1: {
        const field = rng.pick(TOP_FIELDS);
        fields.set(field, hostileValue(rng, options));
        what.push(`${field} is any value`);
        break;
      }
      case 2:
        fields.set('model', str(modelName(rng, options)));
        what.push('a hostile model name');
        break;
      case 3:
      case 4:
        fields.set('messages', arrayText(Array.from({ length: rng.size(1, 30) }, () => message(rng, options))));
        what.push('hostile messages');
        break;
      case 5:
        fields.set('tools', tools(rng, options));
        if (rng.chance(0.5)) fields.set('tool_choice', rng.chance(0.5) ? objectText([['type', str('function')], ['function', objectText([['name', hostileString(rng, options)]])]]) : hostileValue(rng, options));
        what.push('hostile tools');
        break;
      case 6:
        fields.set('response_format', responseFormat(rng, options));
        what.push('a hostile response_format');
        break;
      case 7:
        fields.set('modelgate', overrides(rng, options));
        what.push('hostile modelgate overrides');
        break;
      case 8:
        extra.push([rng.chance(0.5) ? rng.pick(POLLUTING_KEYS) : rng.pick(TOP_FIELDS), hostileValue(rng, options)]);
        what.push('a duplicate, unknown or polluting key');
        break;
      default:
        fields.set('stream', 'true');
        if (rng.chance(0.5)) fields.set('stream_options', rng.chance(0.5) ? '{"include_usage":true}' : hostileValue(rng, options));
        what.push('streamed');
    }
  }
  return { text: objectText([...fields.entries(), ...extra]), what };
}
