// Validation of the chat-completion request body with ajv. The schema follows OpenAI's contract
// but is written for clear errors: messages are discriminated by `role`, content parts by `type`,
// so a bad field yields one 400 naming it (`param`). Unknown top-level fields are allowed here;
// each provider adapter decides what it forwards.
import { Ajv, type ErrorObject } from 'ajv';
import { GatewayError } from './errors.js';
import type { ChatRequest } from './chat-types.js';

const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: 'null' }] });
const textParts = { type: 'array', minItems: 1, items: { type: 'object', required: ['type', 'text'], properties: { type: { const: 'text' }, text: { type: 'string' } } } };
const textContent = { anyOf: [{ type: 'string' }, textParts] };

const userPart = {
  type: 'object',
  required: ['type'],
  properties: { type: { type: 'string' } },
  discriminator: { propertyName: 'type' },
  oneOf: [
    { properties: { type: { const: 'text' }, text: { type: 'string' } }, required: ['type', 'text'] },
    {
      properties: {
        type: { const: 'image_url' },
        image_url: { type: 'object', required: ['url'], properties: { url: { type: 'string', minLength: 1 }, detail: { enum: ['auto', 'low', 'high'] } } },
      },
      required: ['type', 'image_url'],
    },
    { properties: { type: { const: 'input_audio' }, input_audio: { type: 'object' } }, required: ['type', 'input_audio'] },
    { properties: { type: { const: 'file' }, file: { type: 'object' } }, required: ['type', 'file'] },
  ],
};

const toolCall = {
  type: 'object',
  required: ['id', 'type', 'function'],
  properties: {
    id: { type: 'string' },
    type: { const: 'function' },
    function: { type: 'object', required: ['name', 'arguments'], properties: { name: { type: 'string' }, arguments: { type: 'string' } } },
  },
};

const message = {
  type: 'object',
  required: ['role'],
  // name and tool_calls are read from every message (the token estimate), whatever its role: a
  // user message carrying `"tool_calls": "x"` must be a 400, not a crash further on.
  properties: { role: { type: 'string' }, name: { type: 'string' }, tool_calls: { type: 'array', items: toolCall } },
  discriminator: { propertyName: 'role' },
  oneOf: [
    { properties: { role: { const: 'system' }, content: textContent, name: { type: 'string' } }, required: ['role', 'content'] },
    { properties: { role: { const: 'developer' }, content: textContent, name: { type: 'string' } }, required: ['role', 'content'] },
    {
      properties: { role: { const: 'user' }, content: { anyOf: [{ type: 'string' }, { type: 'array', minItems: 1, items: userPart }] }, name: { type: 'string' } },
      required: ['role', 'content'],
    },
    {
      properties: {
        role: { const: 'assistant' },
        content: nullable({ anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'object', required: ['type'], properties: { type: { type: 'string' } } } }] }),
        tool_calls: { type: 'array', items: toolCall },
        refusal: nullable({ type: 'string' }),
        name: { type: 'string' },
      },
      required: ['role'],
    },
    { properties: { role: { const: 'tool' }, content: textContent, tool_call_id: { type: 'string', minLength: 1 } }, required: ['role', 'content', 'tool_call_id'] },
    { properties: { role: { const: 'function' }, content: nullable({ type: 'string' }), name: { type: 'string' } }, required: ['role', 'name'] },
  ],
};

const toolChoice = {
  anyOf: [
    { enum: ['none', 'auto', 'required'] },
    {
      type: 'object',
      required: ['type', 'function'],
      properties: { type: { const: 'function' }, function: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } },
    },
  ],
};

/**
 * Longest model name accepted, in characters. The longest real ids are well under it (the
 * catalog's: 23; Bedrock inference-profile ARNs and Fireworks' `accounts/…/models/…` paths: about
 * 100); unbounded, a name is echoed in `x-modelgate-model` (100 KB overflowed Node clients' header
 * limit after the request was billed) and kept as a key in per-model maps.
 */
export const MAX_MODEL_NAME_LENGTH = 256;

/** The processing tiers billed at the catalog's prices; `flex` and `priority` are priced otherwise. */
export const SERVICE_TIER = { enum: ['auto', 'default', null] };

export const chatRequestSchema = {
  type: 'object',
  required: ['model', 'messages'],
  properties: {
    model: { type: 'string', minLength: 1, maxLength: MAX_MODEL_NAME_LENGTH },
    // OpenAI bills `flex` and `priority` at other prices than the catalog's: refused, so no bill is wrong.
    service_tier: SERVICE_TIER,
    messages: { type: 'array', minItems: 1, items: message },
    temperature: nullable({ type: 'number', minimum: 0, maximum: 2 }),
    top_p: nullable({ type: 'number', minimum: 0, maximum: 1 }),
    max_tokens: nullable({ type: 'integer', minimum: 1 }),
    max_completion_tokens: nullable({ type: 'integer', minimum: 1 }),
    n: nullable({ type: 'integer', minimum: 1, maximum: 1 }),
    stream: nullable({ type: 'boolean' }),
    stream_options: nullable({ type: 'object', properties: { include_usage: { type: 'boolean' } } }),
    stop: nullable({ anyOf: [{ type: 'string' }, { type: 'array', maxItems: 4, items: { type: 'string' } }] }),
    seed: nullable({ type: 'integer' }),
    user: { type: 'string' },
    tools: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'function'],
        properties: {
          type: { const: 'function' },
          function: {
            type: 'object',
            required: ['name'],
            properties: { name: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' }, description: { type: 'string' }, parameters: { type: 'object' } },
          },
        },
      },
    },
    tool_choice: toolChoice,
    parallel_tool_calls: { type: 'boolean' },
    response_format: {
      type: 'object',
      required: ['type'],
      properties: {
        type: { enum: ['text', 'json_object', 'json_schema'] },
        json_schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, schema: { type: 'object' } } },
      },
      // OpenAI refuses a json_schema format without its schema object; the estimator and every
      // adapter read it, so it is refused here rather than found missing later (a 500).
      if: { required: ['type'], properties: { type: { const: 'json_schema' } } },
      then: { required: ['json_schema'], properties: { json_schema: {} } },
    },
    presence_penalty: nullable({ type: 'number', minimum: -2, maximum: 2 }),
    frequency_penalty: nullable({ type: 'number', minimum: -2, maximum: 2 }),
    modelgate: { type: 'object' },
  },
};

// Validation stops at the first bad field (an anyOf still reports each branch's error, which
// describe() chooses among): with allErrors, a body of 300k bad elements cost ~0.5 s of CPU.
// Not checked against ajv's meta-schema at each start (compiling that cost ~35 ms of boot): the
// schema is code, and its test checks it once; strict mode still refuses an unknown keyword.
const ajv = new Ajv({ allErrors: false, strict: true, discriminator: true, validateSchema: false });
const validate = ajv.compile<ChatRequest>(chatRequestSchema);

/** Validates a parsed JSON body; throws a 400 GatewayError naming the first bad field. */
export function validateChatRequest(body: unknown): ChatRequest {
  if (validate(body)) return body;
  throw new GatewayError('bad_request', describe(validate.errors ?? []));
}

/** The deepest error is the most specific; type errors at that spot are merged ("string or array"). */
function describe(errors: ErrorObject[]): { message: string; param: string | null } {
  const depth = (e: ErrorObject) => e.instancePath.split('/').length + (e.keyword === 'required' || e.keyword === 'discriminator' ? 1 : 0);
  const relevant = errors.filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf');
  if (relevant.length === 0) return { message: 'Invalid request body', param: null };
  let deepest = 0;
  for (const error of relevant) deepest = Math.max(deepest, depth(error));
  const atDeepest = relevant.filter((e) => depth(e) === deepest);
  const error = atDeepest[0]!;
  const types = atDeepest.filter((e) => e.keyword === 'type' && e.instancePath === error.instancePath).map((e) => String((e.params as { type: string }).type));
  if (types.length > 1) return { message: `Invalid type for '${toParam(error.instancePath)}': must be ${types.filter((t) => t !== 'null').join(' or ')}.`, param: toParam(error.instancePath) };
  return single(error);
}

function single(error: ErrorObject): { message: string; param: string | null } {
  const params = error.params as Record<string, unknown>;
  let path = error.instancePath;
  if (error.keyword === 'required') path += `/${String(params.missingProperty)}`;
  if (error.keyword === 'discriminator') path += `/${String(params.tag)}`;
  const param = toParam(path);
  if (param === '') return { message: 'Request body must be a JSON object', param: null };
  let why: string;
  switch (error.keyword) {
    case 'required':
      why = 'is required';
      break;
    case 'discriminator':
      why = params.error === 'tag' ? 'is required' : `has an unsupported value`;
      break;
    case 'enum':
      why = `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
      break;
    case 'const':
      why = `must be ${JSON.stringify(params.allowedValue)}`;
      break;
    case 'anyOf':
      why = 'has an invalid type or value';
      break;
    default:
      why = error.message ?? 'is invalid';
  }
  return { message: `Invalid value for '${param}': ${why}.`, param };
}

type SchemaNode = { properties?: Record<string, SchemaNode>; items?: SchemaNode; anyOf?: SchemaNode[]; oneOf?: SchemaNode[] };

/**
 * The field a path into the body belongs to, as a `param`: the path as far as the schema declares
 * it (`tools[0].function.parameters`, not the client's schema inside), at least its first segment
 * (`metadata`, or any unknown field).
 */
export function fieldOf(path: ReadonlyArray<string | number>): string {
  let node: SchemaNode | undefined = chatRequestSchema as unknown as SchemaNode;
  let declared = 0;
  while (node && declared < path.length) {
    node = declaredChild(node, path[declared]!);
    if (node) declared++;
  }
  return toParam(path.slice(0, Math.max(1, declared)).map((segment) => `/${String(segment).replace(/~/g, '~0').replace(/\//g, '~1')}`).join(''));
}

/** A child schema named by the node itself or by one of its anyOf/oneOf branches (nested `nullable`s included). */
function declaredChild(node: SchemaNode, segment: string | number): SchemaNode | undefined {
  const branches: SchemaNode[] = [node];
  for (let i = 0; i < branches.length; i++) {
    const branch = branches[i]!;
    const child = typeof segment === 'number' ? branch.items : Object.hasOwn(branch.properties ?? {}, segment) ? branch.properties![segment] : undefined;
    if (child) return child;
    branches.push(...(branch.anyOf ?? []), ...(branch.oneOf ?? []));
  }
  return undefined;
}

/** `/messages/0/content` → `messages[0].content` */
function toParam(pointer: string): string {
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(segment) ? `[${segment}]` : out === '' ? segment : `.${segment}`;
  }
  return out;
}
