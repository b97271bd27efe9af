// Which catalog models may serve this request, and why the others may not. Every exclusion keeps
// its reason so that, when nothing fits, the error can say which constraint excluded what.
import { isPriced, kindOf, type CatalogModel } from '../../core/catalog.js';
import { estimateCost } from '../../core/estimate.js';
import type { RequestContext, Target } from '../../core/context.js';
import type { HealthRegistry } from '../../core/health.js';
import { hasImages } from '../../core/tokens.js';
import type { Provider } from '../../core/provider.js';

export type Reason =
  | 'kind'
  | 'not_configured'
  | 'circuit_open'
  | 'cooling_down'
  | 'context_length'
  | 'tools'
  | 'vision'
  | 'json'
  | 'json_schema'
  | 'quality'
  | 'max_cost'
  | 'unpriced';

export interface Candidate {
  target: Target;
  /** Estimated USD (prompt counted, output from max_tokens or the default); undefined if unpriced. */
  cost: number | undefined;
}

export interface Exclusion {
  model: CatalogModel;
  reason: Reason;
  detail: string;
}

/**
 * Which constraints a model must meet, besides fitting the request. `quality`: at least
 * quality_threshold. `cost`: a priced model's estimate within max_cost_per_request. `unpriced`: a
 * model without a catalog price may be a candidate (only models the client named explicitly).
 */
export interface Rules {
  quality: boolean;
  cost: boolean;
  unpriced: boolean;
}

export interface Limits {
  qualityThreshold: number;
  maxCost: number;
}

/** Checks models against the request; one per request, so request facts are computed once. */
export class CandidateFilter {
  readonly exclusions: Exclusion[] = [];
  private readonly needs: { tools: boolean; vision: boolean; json: boolean; jsonSchema: boolean };
  private readonly chat: NonNullable<RequestContext['chat']>;
  private readonly now = Date.now();

  constructor(
    ctx: RequestContext,
    private readonly providers: ReadonlyMap<string, Provider>,
    private readonly health: HealthRegistry,
    private readonly limits: Limits,
  ) {
    this.chat = ctx.chat!;
    const body = this.chat.body;
    const format = body.response_format?.type;
    this.needs = {
      tools: (body.tools?.length ?? 0) > 0,
      vision: hasImages(body),
      json: format === 'json_object',
      jsonSchema: format === 'json_schema',
    };
  }

  /**
   * A candidate, or undefined with the exclusion recorded. `rules` say which constraints apply
   * beyond what the request needs (see Rules). Models the client named skip the quality threshold
   * and may be unpriced (the cost guard refuses them unless MODELGATE_ALLOW_UNPRICED_MODELS, and
   * holds them to the per-request cap at its unpriced prices); the requested model itself is not
   * held to the per-request cap here — the cost guard refuses it, with its own message, before any call.
   */
  check(model: CatalogModel, rules: Rules): Candidate | undefined {
    // Chat never goes to an embedding model nor the other way round. A model of no stated kind
    // outside the catalog's prices (`custom/<any>`, an operator's unpriced entry) is what the client
    // that names it says it is.
    const wanted = this.chat.api === 'embeddings' ? 'embedding' : 'chat';
    if (kindOf(model) !== wanted && !(model.kind === undefined && rules.unpriced && !isPriced(model))) {
      return this.exclude(model, 'kind', wanted === 'embedding' ? 'not an embedding model' : 'an embedding model (POST /v1/embeddings)');
    }
    const provider = this.providers.get(model.provider);
    if (!provider?.configured) return this.exclude(model, 'not_configured', `${model.provider} has no credentials`);
    if (this.health.circuitOpen(model.provider, this.now)) return this.exclude(model, 'circuit_open', `${model.provider} circuit is open`);
    const cooling = this.health.cooldownRemaining(model.provider, model.id, this.now);
    if (cooling > 0) return this.exclude(model, 'cooling_down', `${model.provider} asked to retry ${model.id} after ${Math.ceil(cooling / 1000)} s`);
    if (this.needs.tools && !model.capabilities.tools) return this.exclude(model, 'tools', 'no tool calling');
    if (this.needs.vision && !model.capabilities.vision) return this.exclude(model, 'vision', 'no image input');
    if (this.needs.jsonSchema && !model.capabilities.json_schema) return this.exclude(model, 'json_schema', 'no structured output');
    if (this.needs.json && !model.capabilities.json) return this.exclude(model, 'json', 'no JSON mode');
    if (model.context_window !== null && !this.fits(model.context_window)) {
      return this.exclude(model, 'context_length', `needs ~${this.chat.promptTokens + (this.chat.maxOutputTokens ?? 0)} tokens, window ${model.context_window}`);
    }
    // Quality scores rank chat answers; embedding models have none.
    if (rules.quality && wanted === 'chat' && model.quality.score < this.limits.qualityThreshold) {
      return this.exclude(model, 'quality', `quality ${model.quality.score} < ${this.limits.qualityThreshold}`);
    }
    if (!isPriced(model)) return rules.unpriced ? { target: { provider, model }, cost: undefined } : this.exclude(model, 'unpriced', 'no known price');
    const cost = estimateCost(this.chat, model)!;
    if (rules.cost && cost > this.limits.maxCost) return this.exclude(model, 'max_cost', `estimated $${cost.toPrecision(3)} > $${this.limits.maxCost}`);
    return { target: { provider, model }, cost };
  }

  private fits(window: number): boolean {
    const output = this.chat.maxOutputTokens ?? 0;
    // Tokens never outnumber bytes (plus per-message overhead), so most requests fit without counting.
    if (this.chat.promptTokensUpperBound + output <= window) return true;
    return this.chat.promptTokens + output <= window;
  }

  private exclude(model: CatalogModel, reason: Reason, detail: string): undefined {
    this.exclusions.push({ model, reason, detail });
    return undefined;
  }
}
