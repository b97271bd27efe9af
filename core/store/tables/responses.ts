// Stored responses of POST /v1/responses and their output items (core/responses/).
// Part of the store's schema (../schema.ts): epoch-ms times, nano-dollar money, 0/1 flags.

/** A stored response of POST /v1/responses, readable only with the key that made it. */
export interface ResponseTable {
  /** `resp_` + 32 hex digits. */
  id: string;
  key_id: string;
  tenant: string;
  created_at: number;
  expires_at: number;
  /** JSON of the Response object as answered. */
  response: string;
  /** JSON of the conversation as input items: the history, the request's input, the answer's output. */
  items: string;
}

/** An output item of a stored response, by its id (`msg_…`, `fc_…`): what an item_reference names. */
export interface ResponseItemTable {
  item_id: string;
  response_id: string;
  key_id: string;
  expires_at: number;
  /** JSON of the output item. */
  item: string;
}
