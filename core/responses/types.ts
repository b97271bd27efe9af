// The OpenAI Responses API shapes the gateway reads and writes (POST /v1/responses). Only what the
// gateway touches is typed; other fields are kept untyped and, to OpenAI's own endpoint, passed on.

export interface InputTextPart {
  type: 'input_text' | 'output_text';
  text: string;
  [key: string]: unknown;
}

/** A message item, in the easy form (`{role, content}`) or the full one (`type: 'message'`). */
export interface MessageItem {
  type?: 'message';
  id?: string;
  role: 'user' | 'assistant' | 'system' | 'developer';
  content: string | Array<{ type: string; [key: string]: unknown }>;
  status?: string;
}

export interface FunctionCallItem {
  type: 'function_call';
  id?: string;
  call_id: string;
  name: string;
  arguments: string;
  status?: string;
}

export interface FunctionCallOutputItem {
  type: 'function_call_output';
  id?: string;
  call_id: string;
  output: string | Array<{ type: string; [key: string]: unknown }>;
  status?: string;
}

export type InputItem = MessageItem | FunctionCallItem | FunctionCallOutputItem;

export interface ResponsesFunctionTool {
  type: 'function';
  name: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
}

export type ResponsesToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; name: string };

export type TextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; description?: string; strict?: boolean | null };

export interface ResponsesRequest {
  model: string;
  input?: string | InputItem[];
  instructions?: string | null;
  tools?: ResponsesFunctionTool[];
  tool_choice?: ResponsesToolChoice;
  text?: { format?: TextFormat; [key: string]: unknown } | null;
  max_output_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  parallel_tool_calls?: boolean | null;
  metadata?: Record<string, string> | null;
  store?: boolean | null;
  stream?: boolean | null;
  previous_response_id?: string | null;
  user?: string | null;
  [key: string]: unknown;
}

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export interface OutputMessage {
  id: string;
  type: 'message';
  status: 'completed' | 'incomplete' | 'in_progress';
  role: 'assistant';
  content: Array<{ type: 'output_text'; text: string; annotations: unknown[]; logprobs?: unknown[] } | { type: 'refusal'; refusal: string }>;
}

export interface OutputFunctionCall {
  id: string;
  type: 'function_call';
  status: 'completed' | 'incomplete' | 'in_progress';
  call_id: string;
  name: string;
  arguments: string;
}

export type OutputItem = OutputMessage | OutputFunctionCall;

export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: 'completed' | 'incomplete' | 'in_progress' | 'failed';
  completed_at?: number | null;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  model: string;
  output: OutputItem[];
  usage: ResponsesUsage | null;
  [key: string]: unknown;
}
