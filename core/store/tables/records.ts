// Recorded requests (core/records/).
// Part of the store's schema (../schema.ts): epoch-ms times, nano-dollar money, 0/1 flags.

/** A recorded request (core/records/): plain metadata, and its bodies as envelopes when encryption is on. */
export interface RequestRecordTable {
  /** `rec_` + 32 hex digits. */
  id: string;
  /** Epoch ms the request started. */
  created_at: number;
  /** The x-request-id the client saw. */
  request_id: string;
  tenant: string;
  key_id: string;
  api: 'chat' | 'responses' | 'embeddings';
  /** The model the client asked for (`auto` included). */
  model: string;
  provider: string | null;
  routed_model: string | null;
  status: number;
  error_code: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  /** Nano-dollars; null when the price is unknown. */
  cost_nano: number | null;
  latency_ms: number;
  ttft_ms: number | null;
  cache: string | null;
  stream: number;
  /** The OpenAI `user`, as its pseudonym (core/anonymize.ts): filterable, never the value itself. */
  end_user: string | null;
  /** The key id the envelopes name; null: the bodies are plain JSON (encryption was off). */
  encryption_key: string | null;
  /** 1: the request body was cut at MODELGATE_REQUEST_RECORDS_MAX_BODY; 2: the response body; 3: both. */
  truncated: number;
  request_body: string;
  response_body: string | null;
  error_message: string | null;
}
