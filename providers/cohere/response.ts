// Cohere v2 chat response → OpenAI completion (the stream is in stream.ts). Usage is what Cohere
// bills (billed_units), so usage × catalog price matches the invoice; the tool plan is not content
// and is left out; finish reasons ERROR/TIMEOUT become UpstreamErrors (docs/providers/cohere.md).
import type { ChatCompletion, FinishReason, Usage } from '../../core/chat-types.js';
import { type UpstreamError, badResponse, reportedFailure } from '../../core/upstream-error.js';
import { isObject } from '../shared/json-object.js';
import { contentText, isCount, toolCall } from '../shared/native-response.js';
import type { TranslateContext } from '../../core/provider.js';

const PROVIDER = 'cohere';

export function cohereCompletion(body: unknown, context: TranslateContext): ChatCompletion {
  if (!isObject(body) || !isObject(body.message)) throw badResponse(PROVIDER, 'response has no message');
  const finish = finishReason(body.finish_reason, body.message.error ?? body.error, false);
  const text = contentText(body.message.content);
  const toolCalls = Array.isArray(body.message.tool_calls) ? body.message.tool_calls.map((call) => toolCall(PROVIDER, call)) : [];
  const usage = cohereUsage(body.usage);
  return {
    id: typeof body.id === 'string' ? body.id : `chatcmpl-${context.requestId}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: context.model.native_id,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          // OpenAI's shape for a turn that only calls tools: content null, not "".
          content: toolCalls.length > 0 && text === '' ? null : text,
          refusal: null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: finish,
      },
    ],
    ...(usage ? { usage } : {}),
  };
}

/**
 * Cohere's `tokens` count the prompt template it adds (507 tokens for a 12-token question in a
 * recorded response) and `cached_tokens` counts template tokens that hit its cache; neither is
 * billed. `billed_units` is the invoice, so it becomes prompt/completion tokens and no cached
 * discount is reported. `tokens` is the fallback only if billed_units is missing: over- rather
 * than under-billing.
 */
export function cohereUsage(usage: unknown): Usage | undefined {
  if (!isObject(usage)) return undefined;
  const counts = [usage.billed_units, usage.tokens].find((c): c is Record<string, unknown> => isObject(c) && (isCount(c.input_tokens) || isCount(c.output_tokens)));
  if (!counts) return undefined;
  const prompt = isCount(counts.input_tokens) ? counts.input_tokens : 0;
  const completion = isCount(counts.output_tokens) ? counts.output_tokens : 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** providers.md §5: COMPLETE and STOP_SEQUENCE stop, MAX_TOKENS is length, TOOL_CALL tool_calls. */
export function finishReason(value: unknown, error: unknown, inStream: boolean): FinishReason {
  switch (value) {
    case 'MAX_TOKENS':
      return 'length';
    case 'TOOL_CALL':
      return 'tool_calls';
    case 'ERROR':
    case 'TIMEOUT':
      throw generationFailed(String(value), error, inStream);
    default:
      if (typeof error === 'string' && error !== '') throw generationFailed('ERROR', error, inStream);
      return 'stop'; // COMPLETE, STOP_SEQUENCE, and (as litellm does) anything new
  }
}

/** ERROR and TIMEOUT are not answers: another attempt (or provider) may give one. */
export function generationFailed(finish: string, error: unknown, inStream: boolean): UpstreamError {
  const detail = typeof error === 'string' && error !== '' ? error : undefined;
  return reportedFailure(PROVIDER, { finishReason: finish, detail, timedOut: finish === 'TIMEOUT', inStream });
}
