// Sends an alert to a Slack-compatible incoming webhook. The URL is the operator's own (trusted, so
// no private-address guard) and a secret (so no error message names it). Sends are paced per URL;
// a 429 or 503 carries the receiver's Retry-After so the retry waits as long as asked.
import { chatPayload } from './chat-payload.js';
import { paced } from './chat-pace.js';
import { DeliveryError, type AttemptResult, type EventMessage } from './types.js';

export { chatPayload } from './chat-payload.js';

/** Posts a JSON body; written in http-post.ts and injected so tests can use a plain local poster. */
export type PostJson = (
  url: string,
  body: string,
  options: { headers?: Record<string, string>; timeoutMs: number; guard: boolean },
) => Promise<AttemptResult & { retryAfterMs?: number }>;

export interface ChatOptions {
  url: string;
  channel: string;
  username: string;
  timeoutMs: number;
  post: PostJson;
  /** Least time between two messages to one URL; default 1000 ms (Slack's rate per webhook). */
  minIntervalMs?: number;
}

export class ChatChannel {
  private readonly options: ChatOptions;

  constructor(options: ChatOptions) {
    this.options = options;
  }

  async send(message: EventMessage): Promise<AttemptResult> {
    const { url, channel, username, timeoutMs, post } = this.options;
    const body = JSON.stringify(chatPayload(message, channel, username));
    const result = await paced(url, this.options.minIntervalMs ?? 1000, async () => {
      try {
        return await post(url, body, { headers: { 'content-type': 'application/json' }, timeoutMs, guard: false });
      } catch (error) {
        if (error instanceof DeliveryError) throw error;
        // an unknown error's text may quote the URL; keep only a system code
        const code = (error as { code?: unknown })?.code;
        throw new DeliveryError(`chat webhook request failed${typeof code === 'string' && /^[A-Z_]+$/.test(code) ? ` (${code})` : ''}`);
      }
    });
    const { statusCode, latencyMs } = result;
    if (statusCode !== null && statusCode >= 200 && statusCode < 300) return { statusCode, latencyMs };
    throw new DeliveryError(statusCode === null ? 'chat webhook gave no HTTP answer' : `chat webhook answered HTTP ${statusCode}`, {
      statusCode,
      latencyMs,
      retryAfterMs: statusCode === 429 || statusCode === 503 ? result.retryAfterMs : undefined,
      gone: statusCode === 410,
    });
  }
}
