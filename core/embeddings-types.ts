// The OpenAI embeddings shapes the gateway speaks to clients (and adapters translate to). Adapters
// always return float vectors; the gateway encodes base64 itself when the client asks for it, so a
// cached answer serves either encoding.

export interface EmbeddingsRequest {
  model: string;
  /** A string, strings, or token ids (one list, or a list per input: OpenAI-compatible upstreams only). */
  input: string | string[] | number[] | number[][];
  dimensions?: number;
  encoding_format?: 'float' | 'base64';
  user?: string;
  [key: string]: unknown;
}

export interface Embedding {
  object: 'embedding';
  index: number;
  embedding: number[];
}

export interface EmbeddingsUsage {
  prompt_tokens: number;
  total_tokens: number;
}

export interface EmbeddingsResponse {
  object: 'list';
  data: Embedding[];
  model: string;
  usage: EmbeddingsUsage;
}

/** The inputs as a list, one entry per vector asked for. */
export function inputsOf(request: EmbeddingsRequest): Array<string | number[]> {
  const input = request.input;
  if (typeof input === 'string') return [input];
  if (input.length > 0 && typeof input[0] === 'number') return [input as number[]];
  return input as Array<string | number[]>;
}
