// What a finished chat request consumed, in tokens, on the attempt that answered it:
// - a complete answer: the usage the provider reported; without one, the estimated prompt plus the
//   answer estimated (core/tokens.ts);
// - a stream cut short (the client left, or the provider failed after the first content): the
//   prompt as reported (else estimated), and as completion the larger of the reported count and the
//   generated text estimated (core/tokens.ts) — a report sent early, such as the `output_tokens: 1`
//   of Anthropic's message_start, is not the final count;
// - no answer at all: nothing. (What a call that never answered costs is decided by its failure:
//   cost/attempts.ts.)
// A cache hit consumed nothing from a provider.
// Read once the request is over (billing, token limits): computed once per request, and the
// generated text is estimated only when the provider's report is missing or not final.
import { estimateTextTokens } from './tokens.js';
import { promptTokensOn } from './estimate.js';
import type { Usage } from './chat-types.js';
import type { RequestContext } from './context.js';

const computed = new WeakMap<RequestContext, Usage | undefined>();

export function consumedUsage(ctx: RequestContext): Usage | undefined {
  if (!computed.has(ctx)) computed.set(ctx, compute(ctx));
  return computed.get(ctx);
}

function compute(ctx: RequestContext): Usage | undefined {
  const { outcome, chat } = ctx;
  if (!chat || outcome.cache === 'HIT') return undefined;
  const reported = outcome.usage;
  if (reported && !outcome.interrupted) return reported;
  const text = [...outcome.generated];
  for (const choice of outcome.completion?.choices ?? []) {
    if (choice.message.content) text.push(choice.message.content);
    for (const call of choice.message.tool_calls ?? []) text.push(call.function.arguments);
  }
  const counted = text.length > 0 ? estimateTextTokens(text.join('')) : 0;
  const estimated = promptTokensOn(chat, outcome.target?.model);
  if (outcome.interrupted) {
    const prompt = reported?.prompt_tokens ?? estimated;
    const completion = Math.max(reported?.completion_tokens ?? 0, counted);
    return { ...reported, prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  }
  if (outcome.completion === undefined && text.length === 0) return undefined;
  return { prompt_tokens: estimated, completion_tokens: counted, total_tokens: estimated + counted };
}
