// Builds the OpenAI chunks a native stream translates into: the first one carries
// `role: "assistant"` (the SDKs expect it), a finish chunk has an empty delta, and the last is the
// usage chunk with no choices (core drops it when the client did not ask for usage).
import type { ChatChunk, FinishReason, Usage } from '../../core/chat-types.js';

type Delta = ChatChunk['choices'][number]['delta'];

export class ChunkFactory {
  readonly created = Math.floor(Date.now() / 1000);
  private roleSent = false;

  constructor(
    public id: string,
    public model: string,
  ) {}

  /** One chunk for choice 0; the role is added to whichever chunk goes first. */
  delta(delta: Delta, finishReason: FinishReason | null = null): ChatChunk {
    const withRole: Delta = this.roleSent ? delta : { role: 'assistant', ...delta };
    this.roleSent = true;
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index: 0, delta: withRole, finish_reason: finishReason }] };
  }

  usage(usage: Usage): ChatChunk {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage };
  }
}
