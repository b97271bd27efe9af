// What the demo's simulated providers answer: plausible text for the prompt, token usage counted
// like a real provider would, latencies by model class (time to first token, then a steady token
// rate), and occasional failures (429/5xx) so failover has something to do. Requests are read in
// OpenAI's terms (each protocol translates its native request first) and honoured as a model would:
// a tool call when tool_choice asks for one or the prompt is about a tool (demo/tool-intent.ts),
// with arguments valid against the tool's parameters; JSON for a json_object response format and an
// instance of the schema for json_schema (demo/schema-instance.ts); prose otherwise, and after a
// tool result, prose that uses it (JSON, when a JSON format is asked for). Each provider's wire
// format is in demo/protocols/. Embeddings are hashed unit vectors (demo/embedding-vectors.ts).
import { estimateTextTokens, estimatePromptTokens } from '../core/tokens.js';
import type { ChatRequest, ResponseFormat } from '../core/chat-types.js';
import { instanceOf } from './schema-instance.js';
import { lastUserText, textOf, toolToCall } from './tool-intent.js';
import { embed, type SimulatedEmbeddings } from './embedding-vectors.js';

export interface SimulatedAnswer {
  /** Text pieces as a stream would deliver them (about one token each). */
  pieces: string[];
  text: string;
  /** Set when the model calls a tool instead of answering. */
  toolCall?: { id: string; name: string; arguments: string };
  promptTokens: number;
  completionTokens: number;
  finish: 'stop' | 'length' | 'tool_calls';
  ttftMs: number;
  interTokenMs: number;
}

export interface SimulatedFailure {
  status: number;
  retryAfterSeconds?: number;
}

export interface SimulatorOptions {
  /** Share of requests that fail (0..1). */
  failureRate: number;
  /** Multiplies every delay (0 makes the demo instant, for tests). */
  speed: number;
}

const ANSWERS = [
  'Here is a short answer from the simulated model: modelgate routed this request, counted its tokens and priced it from the catalog.',
  'Simulated reply: the gateway picked this provider by its routing strategy, and would fail over to another one if this call broke.',
  'This is a demo completion. Point MODELGATE at real provider keys and the same request reaches a real model instead of this simulator.',
];

let sequence = 0;

export class Simulator {
  constructor(private readonly options: SimulatorOptions) {}

  /** Decides whether this call fails, and how. */
  failure(provider: string): SimulatedFailure | undefined {
    if (Math.random() >= this.options.failureRate) return undefined;
    const roll = Math.random();
    if (roll < 0.4) return { status: 429, retryAfterSeconds: 2 };
    if (provider === 'anthropic' && roll < 0.7) return { status: 529 };
    return { status: 503 };
  }

  answer(model: string, request: ChatRequest): SimulatedAnswer {
    const promptTokens = estimatePromptTokens(request);
    const delays = this.scaled(latencyFor(model));
    const prompt = lastUserText(request.messages);
    const tool = toolToCall(request);
    if (tool) {
      const args = JSON.stringify(instanceOf(asObjectSchema(tool.function.parameters), { prompt }));
      return {
        pieces: [],
        text: '',
        toolCall: { id: `call_sim${++sequence}`, name: tool.function.name, arguments: args },
        promptTokens,
        completionTokens: estimateTextTokens(tool.function.name + args) + 5,
        finish: 'tool_calls',
        ...delays,
      };
    }
    const last = request.messages.at(-1);
    const prose = last?.role === 'tool' ? 'Thanks, the tool result says: ' + textOf(last.content).slice(0, 200) : ANSWERS[sequence++ % ANSWERS.length]!;
    const schema = jsonSchemaOf(request.response_format);
    const whole = schema ? JSON.stringify(instanceOf(schema, { prompt, prose })) : prose;
    // Prose streams word by word; JSON about four characters a token, as tokenizers cut it.
    let pieces: string[] = (schema ? whole.match(/[\s\S]{1,4}/g) : whole.match(/\s*\S+/g)) ?? [whole];
    const limit = request.max_completion_tokens ?? request.max_tokens ?? Infinity;
    let finish: SimulatedAnswer['finish'] = 'stop';
    if (pieces.length > limit) {
      // Cut where the limit falls, as a real model is: truncated JSON is not valid JSON, and finish says why.
      pieces = pieces.slice(0, limit);
      finish = 'length';
    }
    const text = pieces.join('');
    return { pieces, text, promptTokens, completionTokens: estimateTextTokens(text), finish, ...delays };
  }

  /** Vectors for `inputs` (token-id lists are hashed like texts), after an embedding model's short delay. */
  async embeddings(provider: string, model: string, inputs: unknown[], dimensions?: number): Promise<SimulatedEmbeddings> {
    const texts = inputs.map((input) => (typeof input === 'string' ? input : JSON.stringify(input)));
    await this.sleep((60 + 4 * texts.length) * (0.8 + Math.random() * 0.4) * this.options.speed);
    return embed(provider, model, texts, dimensions);
  }

  sleep(ms: number): Promise<void> {
    return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
  }

  private scaled(delays: { ttftMs: number; interTokenMs: number }): { ttftMs: number; interTokenMs: number } {
    return { ttftMs: delays.ttftMs * this.options.speed, interTokenMs: delays.interTokenMs * this.options.speed };
  }
}

/** Bigger models start later and type slower; a little jitter so latency routing has signal. */
function latencyFor(model: string): { ttftMs: number; interTokenMs: number } {
  const small = /mini|nano|lite|flash|haiku|small|r7b|8b|luna/.test(model);
  const large = /opus|pro|large|fable|sol|5\.5|command-a|medium/.test(model);
  const jitter = 0.8 + Math.random() * 0.4;
  if (small) return { ttftMs: 180 * jitter, interTokenMs: 12 * jitter };
  if (large) return { ttftMs: 650 * jitter, interTokenMs: 35 * jitter };
  return { ttftMs: 350 * jitter, interTokenMs: 22 * jitter };
}

/** What JSON to answer with: the client's schema, a one-field object for plain JSON mode, or none (prose). */
function jsonSchemaOf(format: ResponseFormat | undefined): Record<string, unknown> | undefined {
  if (format?.type === 'json_schema' && format.json_schema.schema) return format.json_schema.schema;
  if (format?.type === 'json_object' || format?.type === 'json_schema') {
    return { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
  }
  return undefined;
}

/** Tool arguments are always a JSON object, even when the parameters schema leaves out `type` (or is absent). */
function asObjectSchema(parameters: Record<string, unknown> | undefined): Record<string, unknown> {
  return parameters?.type ? parameters : { type: 'object', properties: {}, ...parameters };
}
