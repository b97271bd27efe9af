// Request records as core/records/ answers them: a record's metadata (the list), and one record with
// its decrypted bodies or why they could not be decrypted.
import type { Schema } from '../types.js';

const nullable = (schema: Record<string, unknown>, description?: string) => ({ anyOf: [schema, { type: 'null' }], ...(description ? { description } : {}) });
const count = { type: 'integer', minimum: 0 };

const metadata = {
  object: { const: 'request_record' },
  id: { type: 'string', pattern: '^rec_[0-9a-f]{32}$' },
  created_at: { type: 'string', format: 'date-time', description: 'When the request started.' },
  request_id: { type: 'string', description: 'The x-request-id the client saw.' },
  key_id: { type: 'string' },
  tenant: { type: 'string' },
  api: { type: 'string', enum: ['chat', 'responses', 'embeddings'] },
  model: { type: 'string', description: 'The model the client asked for (`auto` included).' },
  provider: nullable({ type: 'string' }, 'Where it was routed; null when it never was (refused before routing).'),
  routed_model: nullable({ type: 'string' }),
  status: { type: 'integer', description: 'The status answered; 499: the client left first.' },
  error_code: nullable({ type: 'string' }, 'Why it did not end in a complete answer (the error code, `stream_failed`, `client_closed`).'),
  usage: { type: 'object', required: ['prompt_tokens', 'completion_tokens'], properties: { prompt_tokens: count, completion_tokens: count } },
  cost_usd: nullable({ type: 'number', minimum: 0 }, 'Null when the price is unknown.'),
  latency_ms: count,
  ttft_ms: nullable(count),
  cache: nullable({ type: 'string', enum: ['HIT', 'MISS', 'BYPASS'] }),
  stream: { type: 'boolean' },
  user: nullable({ type: 'string', pattern: '^anon_[0-9a-f]{16}$' }, 'The OpenAI `user`, as its keyed pseudonym (never the value).'),
  encryption_key: nullable({ type: 'string' }, 'The key id the bodies are sealed under; null: stored unencrypted.'),
  truncated: {
    type: 'object',
    required: ['request', 'response'],
    description: 'Bodies cut at MODELGATE_REQUEST_RECORDS_MAX_BODY: such a body is answered as a string.',
    properties: { request: { type: 'boolean' }, response: { type: 'boolean' } },
  },
};

export const recordSchemas = {
  RequestRecordSummary: { type: 'object', description: 'A request record without its bodies.', required: Object.keys(metadata), properties: metadata },
  RequestRecord: {
    type: 'object',
    description: 'A request record with its bodies, decrypted and as anonymized when stored.',
    required: [...Object.keys(metadata), 'bodies', 'decrypt_error'],
    properties: {
      ...metadata,
      bodies: nullable(
        {
          type: 'object',
          required: ['request', 'response', 'error_message'],
          properties: {
            request: { description: 'The request body as the client sent it (anonymized); a string when cut.' },
            response: { description: 'The answer: the completion object, `{text}` assembled from a stream, or a summary of embeddings; null when none came.' },
            error_message: nullable({ type: 'string' }),
          },
        },
        'Null when they cannot be decrypted (see decrypt_error).',
      ),
      decrypt_error: nullable(
        {
          type: 'object',
          required: ['reason', 'message'],
          properties: { reason: { type: 'string', enum: ['malformed', 'key_unknown', 'authentication_failed'] }, message: { type: 'string' } },
        },
        'Why the bodies could not be decrypted: their key is gone (destroyed), or the envelope does not authenticate.',
      ),
    },
  },
  RequestRecordList: {
    type: 'object',
    required: ['object', 'data', 'first_id', 'last_id', 'has_more'],
    properties: {
      object: { const: 'list' },
      data: { type: 'array', items: { $ref: '#/components/schemas/RequestRecordSummary' } },
      first_id: { type: ['string', 'null'] },
      last_id: { type: ['string', 'null'], description: 'Pass as `after` for the next page.' },
      has_more: { type: 'boolean' },
    },
  },
} as const satisfies Record<string, Schema>;
