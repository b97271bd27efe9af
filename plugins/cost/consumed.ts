// What a finished chat request consumed, in tokens: the usage the provider reported, else — for a
// stream that ended early or never reported usage — the estimated prompt plus the generated text
// counted with the tokenizer. A cache hit consumed nothing; a request that failed before any
// content was generated consumed nothing either (providers do not bill those).
import { estimateTextTokens } from '../../core/tokens.js';
import type { Usage } from '../../core/chat-types.js';
import type { RequestContext } from '../../core/context.js';

export function consumedUsage(ctx: RequestContext): Usage | undefined {
  const { outcome, chat } = ctx;
  if (!chat || outcome.cache === 'HIT') return undefined;
  if (outcome.usage) return outcome.usage;
  const text = [...outcome.generated];
  for (const choice of outcome.completion?.choices ?? []) {
    if (choice.message.content) text.push(choice.message.content);
    for (const call of choice.message.tool_calls ?? []) text.push(call.function.arguments);
  }
  // A client that left while a provider was answering is billed for the prompt at least.
  const answered = text.length > 0 || outcome.completion !== undefined || outcome.interrupted !== undefined || (ctx.signal.aborted && outcome.attempts > 0 && !ctx.error);
  if (!answered) return undefined;
  const completion = text.length > 0 ? estimateTextTokens(text.join('')) : 0;
  return { prompt_tokens: chat.promptTokens, completion_tokens: completion, total_tokens: chat.promptTokens + completion };
}
