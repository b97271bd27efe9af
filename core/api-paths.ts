// The paths of the APIs that run the whole pipeline (routing, limits, cost, cache, failover).
export const CHAT_PATH = '/v1/chat/completions';
export const RESPONSES_PATH = '/v1/responses';
export const EMBEDDINGS_PATH = '/v1/embeddings';
