// Assignment: deterministic (the same unit, the same arm, whatever process computes it), unbiased
// (over 10,000 units the arms' shares match their weights by a chi-square test), independent of the
// entry draw (lowering `percent` never moves a unit that stays), and the unit read from where the
// experiment says.
import t from 'tap';
import { armFor, draw, liveExperiment, unitOf } from '../../plugins/experiments/assign.js';
import type { Definition } from '../../plugins/experiments/definition.js';
import type { RequestContext } from '../../core/context.js';
import { Anonymizer } from '../../core/anonymize.js';

function definition(weights: number[], extra: Partial<Definition> = {}): Definition {
  return {
    description: null,
    match: { model: 'support-bot', percent: 100 },
    unit: 'user',
    arms: weights.map((weight, i) => ({ name: `arm${i}`, model: `model-${i}`, weight })),
    metrics: ['cost'],
    primary_metric: 'cost',
    guardrails: [],
    early_stop: false,
    min_detectable_effect: 0.05,
    alpha: 0.05,
    duration_days: 7,
    ...extra,
  };
}

const resolve = (name: string) => [{ provider: 'openai', id: name, aliases: [] }];

/** P(χ²(df) > x) < 0.001 critical values. */
const CHI2_999: Record<number, number> = { 1: 10.83, 2: 13.82, 3: 16.27 };

t.test('the arms get their weights\' shares over 10,000 units (chi-square, p > 0.001)', async (t) => {
  for (const weights of [[50, 50], [70, 20, 10], [1, 1, 1, 1]]) {
    const experiment = liveExperiment('exp_0123456789abcdef01234567', 'x', definition(weights), resolve);
    const counts = new Map<string, number>();
    const units = 10_000;
    for (let i = 0; i < units; i++) {
      const arm = armFor(experiment, `user-${i}`).name;
      counts.set(arm, (counts.get(arm) ?? 0) + 1);
    }
    const total = weights.reduce((a, b) => a + b, 0);
    let chi2 = 0;
    weights.forEach((weight, i) => {
      const expected = (units * weight) / total;
      chi2 += ((counts.get(`arm${i}`) ?? 0) - expected) ** 2 / expected;
    });
    t.ok(chi2 < CHI2_999[weights.length - 1]!, `weights ${weights.join('/')}: χ² = ${chi2.toFixed(2)} with ${weights.length - 1} df`);
  }
});

t.test('assignment is a pure function of the experiment and the unit', async (t) => {
  const a = liveExperiment('exp_aaaaaaaaaaaaaaaaaaaaaaaa', 'x', definition([1, 1]), resolve);
  const again = liveExperiment('exp_aaaaaaaaaaaaaaaaaaaaaaaa', 'x', definition([1, 1]), resolve);
  const other = liveExperiment('exp_bbbbbbbbbbbbbbbbbbbbbbbb', 'x', definition([1, 1]), resolve);
  let same = 0;
  let differ = 0;
  for (let i = 0; i < 1000; i++) {
    if (armFor(a, `u${i}`).name !== armFor(again, `u${i}`).name) differ++;
    if (armFor(a, `u${i}`).name === armFor(other, `u${i}`).name) same++;
  }
  t.equal(differ, 0, 'the same experiment puts every unit where it put it before');
  // Another experiment draws afresh: about half the units share an arm, not all of them.
  t.ok(same > 400 && same < 600, `${same} of 1000 units in the same arm of an unrelated experiment`);
  t.equal(draw('exp_x', 'arm', 'u1'), draw('exp_x', 'arm', 'u1'));
  t.not(draw('exp_x', 'arm', 'u1'), draw('exp_x', 'enter', 'u1'), 'entry and arm are separate draws');
});

t.test('an arm of weight 0 gets no unit; lowering the entry share never moves a unit between arms', async (t) => {
  const experiment = liveExperiment('exp_cccccccccccccccccccccccc', 'x', definition([1, 0, 1]), resolve);
  t.notOk(Array.from({ length: 2000 }, (_, i) => armFor(experiment, `u${i}`).name).includes('arm1'), 'no unit in the arm of weight 0');
  const inAt = (percent: number, unit: string) => draw(experiment.id, 'enter', unit) * 100 < percent;
  let kept = 0;
  let lost = 0;
  for (let i = 0; i < 2000; i++) {
    const unit = `u${i}`;
    if (inAt(10, unit)) {
      kept++;
      if (!inAt(50, unit)) lost++;
    }
  }
  t.equal(lost, 0, 'a unit in at 10% is in at 50%');
  t.ok(kept > 120 && kept < 280, `${kept} of 2000 units enter at 10%`);
});

t.test('the unit comes from the user field, the key id or a header, within the tenant; without one the request does not enter', async (t) => {
  const anonymizer = new Anonymizer({ enabled: true, fields: [], key: Buffer.alloc(32, 7) });
  const pseudonym = (value: string) => anonymizer.pseudonym(value);
  const ctx = (user: unknown, headers: Record<string, string> = {}, tenant = 't') =>
    ({ chat: { body: { model: 'support-bot', messages: [], user } }, principal: { keyId: 'key_1', tenant, admin: false }, headers }) as unknown as RequestContext;
  const byUser = liveExperiment('exp_1', 'x', definition([1, 1]), resolve);
  const byKey = liveExperiment('exp_1', 'x', definition([1, 1], { unit: 'key' }), resolve);
  const byHeader = liveExperiment('exp_1', 'x', definition([1, 1], { unit: 'header:X-Tenant-User' }), resolve);
  const alice = unitOf(byUser, ctx('alice'), pseudonym)!;
  t.notOk(alice.includes('alice'), 'a user is taken by its pseudonym');
  t.equal(unitOf(byUser, ctx(anonymizer.pseudonym('alice')), pseudonym), alice, 'the same unit when the body was anonymized before the step (MODELGATE_ANONYMIZE_UPSTREAM)');
  t.not(unitOf(byUser, ctx('alice', {}, 'other-tenant'), pseudonym), alice, 'one name in two tenants is two units');
  t.equal(unitOf(byUser, ctx(undefined), pseudonym), undefined);
  t.equal(unitOf(byUser, ctx(''), pseudonym), undefined);
  t.equal(unitOf(byKey, ctx(undefined), pseudonym), 'key_1');
  t.equal(unitOf(byHeader, ctx(undefined, { 'x-tenant-user': 'u-77' }), pseudonym), 't\u0000u-77');
  t.equal(unitOf(byHeader, ctx('alice'), pseudonym), undefined);
  t.ok(unitOf(byHeader, ctx(undefined, { 'x-tenant-user': 'x'.repeat(5000) }), pseudonym)!.length < 600, 'a long unit is clipped');
});
