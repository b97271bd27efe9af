// Validators from OpenAI's published chat schema (test/fixtures/openai-chat.schema.json): every
// response, chunk and error the gateway writes must pass them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { projectRoot } from '../../core/paths.js';

const schema = JSON.parse(readFileSync(join(projectRoot, 'test', 'fixtures', 'openai-chat.schema.json'), 'utf8'));
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
ajv.addSchema(schema);

function validator(name: string) {
  const validate = ajv.getSchema(`${schema.$id}#/$defs/${name}`);
  if (!validate) throw new Error(`no schema ${name}`);
  return (value: unknown): string | null => (validate(value) ? null : ajv.errorsText(validate.errors));
}

/** Each returns null when valid, else the errors as text (so `t.equal(check(x), null)` shows them). */
export const checkCompletion = validator('CreateChatCompletionResponse');
export const checkChunk = validator('CreateChatCompletionStreamResponse');
export const checkError = validator('ErrorResponse');
export const checkModelList = validator('ListModelsResponse');
