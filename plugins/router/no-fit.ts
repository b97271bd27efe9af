// The answer when no candidate is left, chosen by what excluded them: only unconfigured providers →
// 404 Model unavailable; only open circuits or Retry-After cooldowns (of those provider+models) →
// 503 Provider unavailable at once (with Retry-After); anything else → 400 listing which constraint
// excluded which models.
import { GatewayError } from '../../core/errors.js';
import type { HealthRegistry } from '../../core/health.js';
import type { Exclusion, Reason } from './candidates.js';
import { retryAfterSeconds } from '../../core/respond.js';

const WORDS: Record<Reason, string> = {
  kind: 'the wrong kind of model',
  not_configured: 'provider not configured',
  circuit_open: 'circuit open',
  cooling_down: 'provider asked to retry later',
  context_length: 'prompt too long for the context window',
  tools: 'no tool calling',
  vision: 'no image input',
  json: 'no JSON mode',
  json_schema: 'no structured output (json_schema)',
  quality: 'below quality_threshold',
  max_cost: 'estimated cost over max_cost_per_request',
  unpriced: 'no known price (auto only picks priced models)',
};

export function noCandidate(exclusions: Exclusion[], health: HealthRegistry): GatewayError {
  // Models of the other kind (embedding models for a chat request) are named only when nothing else was a candidate.
  const sameKind = exclusions.filter((e) => e.reason !== 'kind');
  const relevant = (sameKind.length > 0 ? sameKind : exclusions).filter((e) => e.reason !== 'not_configured');
  if (relevant.length === 0) return new GatewayError('model_unavailable', { param: 'model' });

  if (relevant.every((e) => e.reason === 'circuit_open' || e.reason === 'cooling_down')) {
    const waits = relevant.map((e) => Math.max(health.circuitRemaining(e.model.provider), health.cooldownRemaining(e.model.provider, e.model.id)));
    return new GatewayError('provider_unavailable', {
      code: relevant.some((e) => e.reason === 'circuit_open') ? 'circuit_open' : 'provider_cooling_down',
      headers: { 'retry-after': retryAfterSeconds(Math.min(...waits)) },
    });
  }

  const byReason = new Map<Reason, Exclusion[]>();
  for (const exclusion of relevant) byReason.set(exclusion.reason, [...(byReason.get(exclusion.reason) ?? []), exclusion]);
  const parts = [...byReason.entries()].map(([reason, list]) => {
    const shown = list.slice(0, 3).map((e) => `${e.model.provider}/${e.model.id} (${e.detail})`);
    const more = list.length > 3 ? ` and ${list.length - 3} more` : '';
    return `${WORDS[reason]}: ${shown.join(', ')}${more}`;
  });
  return new GatewayError('bad_request', {
    param: 'model',
    code: 'no_model_fits',
    message: `No model fits this request — ${parts.join('; ')}.`,
  });
}
