// Validators from OpenAI's published Responses + Embeddings schema (test/fixtures/openai-responses.schema.json,
// copied from shared/protocol). The spec and the live API disagree in a few known places
// (shared/protocol/README.md, "Spec vs recorded traffic"); each check first applies exactly those
// normalisations to a copy and reports which it applied, so a test can see nothing else was waved through.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { projectRoot } from '../../core/paths.js';

const schema = JSON.parse(readFileSync(join(projectRoot, 'test', 'fixtures', 'openai-responses.schema.json'), 'utf8'));
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
ajv.addSchema(schema);

function validator(name: string) {
  const validate = ajv.getSchema(`${schema.$id}#/$defs/${name}`);
  if (!validate) throw new Error(`no schema ${name}`);
  return (value: unknown): string | null => (validate(value) ? null : `${name}: ${ajv.errorsText(validate.errors)}`);
}

/** The event's own $def by its `type` (ResponseStreamEvent is an anyOf, whose errors are unreadable). */
const eventDefs = new Map<string, string>();
for (const ref of schema.$defs.ResponseStreamEvent.anyOf as Array<{ $ref: string }>) {
  const name = ref.$ref.split('/').pop()!;
  const type = schema.$defs[name].properties?.type?.enum?.[0];
  if (type) eventDefs.set(type, name);
}

const errorCodes: string[] = schema.$defs.ResponseErrorCode.enum;

/** The known spec-vs-wire differences, by the names shared/protocol/verify/validate-responses.cjs prints. */
export type Known =
  | 'response-user-null'
  | 'response-usage-null'
  | 'usage-no-cache_write_tokens'
  | 'response-error-code-not-in-enum'
  | 'fc-args-done-no-name'
  | 'error-event-nested';

function normaliseResponse(response: any, applied: Set<Known>): void {
  if (!response || typeof response !== 'object') return;
  if (response.user === null) {
    delete response.user;
    applied.add('response-user-null');
  }
  if (response.usage === null) {
    delete response.usage;
    applied.add('response-usage-null');
  }
  const details = response.usage?.input_tokens_details;
  if (details && !('cache_write_tokens' in details) && Number.isInteger(details.cached_tokens)) {
    details.cache_write_tokens = 0;
    applied.add('usage-no-cache_write_tokens');
  }
  const error = response.error;
  if (error && typeof error.code === 'string' && !errorCodes.includes(error.code) && typeof error.message === 'string') {
    response.error = null;
    applied.add('response-error-code-not-in-enum');
  }
}

const checkResponseDef = validator('Response');
const checkStreamEventUnion = validator('ResponseStreamEvent');

/** A non-stream Response (or one read back by GET): null when valid, else the errors. */
export function checkResponse(value: unknown, applied = new Set<Known>()): string | null {
  const copy = structuredClone(value);
  normaliseResponse(copy, applied);
  return checkResponseDef(copy);
}

/**
 * Every event of one stream, in order: its own $def and the union, after the known normalisations.
 * Returns the list of problems (empty when all pass) and the normalisations applied.
 */
export function checkStreamEvents(events: unknown[]): { problems: string[]; applied: Set<Known> } {
  const problems: string[] = [];
  const applied = new Set<Known>();
  const names = new Map<string, string>();
  events.forEach((original, index) => {
    const event = structuredClone(original) as any;
    if (event.response) normaliseResponse(event.response, applied);
    if (event.type === 'response.output_item.added' && event.item?.id) names.set(event.item.id, event.item.name);
    if (event.type === 'response.function_call_arguments.done' && !('name' in event) && names.has(event.item_id)) {
      event.name = names.get(event.item_id);
      applied.add('fc-args-done-no-name');
    }
    if (event.type === 'error' && event.error && typeof event.error === 'object' && !('message' in event)) {
      const { code, message, param } = event.error;
      Object.assign(event, { code, message, param });
      delete event.error;
      applied.add('error-event-nested');
    }
    const own = eventDefs.get(event.type);
    if (!own) {
      problems.push(`#${index}: unknown event type ${event.type}`);
      return;
    }
    for (const problem of [validator(own)(event), checkStreamEventUnion(event)]) if (problem) problems.push(`#${index} ${event.type}: ${problem}`);
  });
  return { problems, applied };
}

export const checkEmbeddings = validator('CreateEmbeddingResponse');
export const checkResponsesError = validator('ErrorResponse');
