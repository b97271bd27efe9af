// Which experiment a request enters and which arm it gets. Assignment is a pure function of the
// experiment's id and the unit (the request's `user`, its key id, or a header): a SHA-256 of the
// two, read as a number in [0, 1). So a unit stays in its arm on every request and on every
// replica, with no shared state, and arms receive their weights' shares (test/experiments/assign).
// Two independent draws: one decides whether the unit enters at all (`match.percent`), the other
// its arm — so lowering the percentage never moves a unit that stays from one arm to another.
import { createHash } from 'node:crypto';
import type { RequestContext } from '../../core/context.js';
import { modelAllowance } from '../../core/allowed-models.js';
import type { CatalogModel } from '../../core/catalog.js';
import { unitHeader, type Arm, type Definition } from './definition.js';

/** A running or promoted experiment, as the request path needs it. */
export interface LiveExperiment {
  id: string;
  name: string;
  definition: Definition;
  /** Set once promoted: every matching request goes to this arm, outside the experiment. */
  promotedArm?: Arm;
  /** The unit header's name, when the unit is a header. */
  header?: string;
  /** Sum of the arms' weights. */
  totalWeight: number;
  /** Per arm with a model: the catalog entries it names (what a key's allowed models are checked against). */
  armModels: ReadonlyMap<string, readonly ModelName[]>;
}

export type ModelName = Pick<CatalogModel, 'provider' | 'id' | 'aliases'>;

export function liveExperiment(id: string, name: string, definition: Definition, resolve: (model: string) => readonly ModelName[], promotedArm?: string): LiveExperiment {
  return {
    id,
    name,
    definition,
    armModels: new Map(definition.arms.filter((a) => a.model !== undefined).map((a) => [a.name, resolve(a.model!)])),
    promotedArm: promotedArm === undefined ? undefined : definition.arms.find((a) => a.name === promotedArm),
    header: unitHeader(definition.unit),
    totalWeight: definition.arms.reduce((sum, a) => sum + a.weight, 0),
  };
}

/** A number in [0, 1) from the experiment, a purpose and the unit: uniform, and the same everywhere. */
export function draw(experimentId: string, purpose: 'enter' | 'arm', unit: string): number {
  const digest = createHash('sha256').update(`${experimentId}\u0000${purpose}\u0000${unit}`).digest();
  // 48 bits: exact in a double, and far finer than any weight.
  return digest.readUIntBE(0, 6) / 2 ** 48;
}

/** The arm a unit falls in: arms take consecutive slices of [0, 1) in proportion to their weights. */
export function armFor(experiment: LiveExperiment, unit: string): Arm {
  const point = draw(experiment.id, 'arm', unit) * experiment.totalWeight;
  let edge = 0;
  for (const arm of experiment.definition.arms) {
    edge += arm.weight;
    if (point < edge && arm.weight > 0) return arm;
  }
  // Rounding at the very top: the last arm with a weight.
  return experiment.definition.arms.findLast((a) => a.weight > 0)!;
}

/** Whether the request matches the experiment's traffic (model and keys; the percentage is drawn per unit). */
export function matches(experiment: LiveExperiment, ctx: RequestContext): boolean {
  const match = experiment.definition.match;
  if (match.model !== undefined && ctx.chat!.body.model !== match.model) return false;
  if (match.keys !== undefined && !match.keys.includes(ctx.principal?.keyId ?? '')) return false;
  // A key that may not use every arm's model stays out: entering it would refuse some of its
  // requests (or bias the arms, were it kept out of only some).
  const allowed = ctx.principal?.allowedModels;
  if (allowed) {
    const may = modelAllowance(allowed);
    for (const models of experiment.armModels.values()) if (!models.some(may)) return false;
  }
  return true;
}

/**
 * The request's unit: its `user`, its key id or the header's value, within its tenant; undefined
 * when it has none (it does not enter). A `user` is taken by its pseudonym (`pseudonym`): the same
 * whether or not MODELGATE_ANONYMIZE_UPSTREAM already replaced it in the body, so turning that on
 * or off moves nobody between arms.
 */
export function unitOf(experiment: LiveExperiment, ctx: RequestContext, pseudonym: (value: string) => string): string | undefined {
  const unit = experiment.definition.unit;
  if (unit === 'key') return ctx.principal?.keyId;
  const tenant = ctx.principal?.tenant ?? '';
  if (unit === 'user') {
    const user = ctx.chat!.body.user;
    return typeof user === 'string' && user.length > 0 ? `${tenant}\u0000${pseudonym(user.slice(0, 512))}` : undefined;
  }
  const value = ctx.headers[experiment.header!];
  const text = Array.isArray(value) ? value[0] : value;
  return text ? `${tenant}\u0000${text.slice(0, 512)}` : undefined;
}

/** Sends the request to the arm: its model replaces the requested one, its strategy ranks the candidates. */
export function applyArm(ctx: RequestContext, arm: Arm): void {
  const chat = ctx.chat!;
  if (arm.model !== undefined) {
    chat.body.model = arm.model;
    if (chat.responses) chat.responses.request.model = arm.model;
  }
  if (arm.strategy !== undefined) chat.overrides = { ...chat.overrides, routing: { ...(chat.overrides.routing as object | undefined), strategy: arm.strategy } };
}
