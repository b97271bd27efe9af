// What the demo's simulated providers answer: plausible text for the prompt, token usage counted
// like a real provider would, latencies by model class (time to first token, then a steady token
// rate), a tool call when the request offers tools, and occasional failures (429/5xx) so failover
// has something to do. Each provider's wire format is in demo/protocols/.
import { estimateTextTokens, estimatePromptTokens } from '../core/tokens.js';
import type { ChatRequest } from '../core/chat-types.js';

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
    const lastUser = [...request.messages].reverse().find((m) => m.role === 'user' || m.role === 'tool');
    const tool = request.tools?.[0];
    const delays = latencyFor(model);
    if (tool && lastUser?.role === 'user' && request.tool_choice !== 'none') {
      const args = JSON.stringify(exampleArguments(tool.function.parameters));
      return {
        pieces: [],
        text: '',
        toolCall: { id: `call_sim${++sequence}`, name: tool.function.name, arguments: args },
        promptTokens,
        completionTokens: estimateTextTokens(tool.function.name + args) + 5,
        finish: 'tool_calls',
        ...this.scaled(delays),
      };
    }
    const base = lastUser?.role === 'tool' ? 'Thanks, the tool result says: ' + contentText(lastUser.content).slice(0, 200) : ANSWERS[sequence++ % ANSWERS.length]!;
    let pieces: string[] = base.match(/\s*\S+/g) ?? [base];
    const limit = request.max_completion_tokens ?? request.max_tokens ?? Infinity;
    let finish: SimulatedAnswer['finish'] = 'stop';
    if (pieces.length > limit) {
      pieces = pieces.slice(0, limit);
      finish = 'length';
    }
    const text = pieces.join('');
    return { pieces, text, promptTokens, completionTokens: estimateTextTokens(text), finish, ...this.scaled(delays) };
  }

  sleep(ms: number): Promise<void> {
    return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
  }

  private scaled(delays: { ttftMs: number; interTokenMs: number }) {
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

function exampleArguments(schema: Record<string, unknown> | undefined): Record<string, unknown> {
  const properties = (schema?.properties ?? {}) as Record<string, { type?: string }>;
  const out: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) {
    out[name] = property.type === 'number' || property.type === 'integer' ? 42 : property.type === 'boolean' ? true : `example ${name}`;
  }
  return out;
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (part as { text?: string }).text ?? '').join(' ');
  return '';
}
