// The per-request families counted in plain fields (plugins/metrics/local-series.ts) export exactly
// what prom-client's own Counter and Histogram export for the same calls: the same text, the same
// JSON (what workers send), the same merge — through removals, resets and repeated scrapes.
import t, { type Test } from 'tap';
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { LocalCounter, LocalHistogram } from '../../plugins/metrics/local-series.js';
import { Children } from '../../plugins/metrics/labels.js';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.1, 0.25, 1, 2.5];
const LABELS = ['route', 'provider', 'model'] as const;
// Bounds exactly, between them, below the first, above the last, zero, negative, sums that round.
const VALUES = [0.0005, 0.001, 0.0007, 0.1, 0.1 + 0.2, 2.5, 2.5000001, 1000, 0, -1, 1e-9, 0.25, 0.3, 1 / 3];
const A = ['POST /v1/chat/completions', 'openai', 'gpt-4o-mini'];
const B = ['GET /v1/models', 'none', 'a "quoted"\\model\nname'];

/** The same families twice: prom-client's, and the local ones, each on a registry of its own. */
function pair() {
  const theirs = new Registry();
  const ours = new Registry();
  const help = 'Help with "quotes" and a \\ backslash.';
  return {
    theirs,
    ours,
    prom: {
      requests: new Counter({ name: 'x_requests_total', help, labelNames: LABELS, registers: [theirs] }),
      duration: new Histogram({ name: 'x_duration_seconds', help, labelNames: LABELS, buckets: BUCKETS, registers: [theirs] }),
      hits: new Counter({ name: 'x_hits_total', help, registers: [theirs] }),
      plain: new Histogram({ name: 'x_plain_seconds', help, buckets: BUCKETS, registers: [theirs] }),
    },
    local: {
      requests: new LocalCounter({ name: 'x_requests_total', help, labelNames: LABELS, registers: [ours] }),
      duration: new LocalHistogram({ name: 'x_duration_seconds', help, labelNames: LABELS, buckets: BUCKETS, registers: [ours] }),
      hits: new LocalCounter({ name: 'x_hits_total', help, registers: [ours] }),
      plain: new LocalHistogram({ name: 'x_plain_seconds', help, buckets: BUCKETS, registers: [ours] }),
    },
  };
}

async function same(t: Test, p: ReturnType<typeof pair>, message: string) {
  t.equal(await p.ours.metrics(), await p.theirs.metrics(), `${message}: the same text`);
  t.same(await p.ours.getMetricsAsJSON(), await p.theirs.getMetricsAsJSON(), `${message}: the same JSON`);
}

t.test('before anything is counted: unlabelled families at zero, labelled ones empty', async (t) => {
  const p = pair();
  p.local.requests.series(...A); // resolved but never counted: not exported, as prom-client's labels()
  p.local.duration.series(...A);
  await same(t, p, 'fresh');
});

t.test('counts, bucket edges and float sums equal prom-client’s, scrape after scrape', async (t) => {
  const p = pair();
  const a = { requests: p.local.requests.series(...A), duration: p.local.duration.series(...A) };
  const b = { requests: p.local.requests.series(...B), duration: p.local.duration.series(...B) };
  const labelsOf = (values: string[]) => Object.fromEntries(LABELS.map((name, i) => [name, values[i]!]));
  for (const [i, value] of VALUES.entries()) {
    const [ours, values] = i % 3 === 0 ? [b, B] : [a, A];
    ours.requests.inc();
    p.prom.requests.labels(...values).inc();
    ours.requests.inc(value > 0 ? value : 0);
    p.prom.requests.inc(labelsOf(values), value > 0 ? value : 0);
    ours.duration.observe(value);
    p.prom.duration.labels(...values).observe(value);
    p.local.plain.series().observe(value);
    p.prom.plain.observe(value);
    p.local.hits.inc();
    p.prom.hits.inc();
    if (i % 5 === 4) await same(t, p, `after ${i + 1} values`);
  }
  await same(t, p, 'all values');
  await same(t, p, 'scraped again, nothing counted twice');
  t.match(await p.ours.metrics(), 'x_duration_seconds_bucket{le="2.5",route="POST /v1/chat/completions",provider="openai",model="gpt-4o-mini"}', 'le first, then the labels');
});

t.test('a removed series ends, and starts again from zero when counted again; the holder of the old one counts into it', async (t) => {
  const p = pair();
  const held = p.local.requests.series(...A);
  const heldDuration = p.local.duration.series(...A);
  for (const value of [1, 2]) {
    held.inc(value);
    p.prom.requests.labels(...A).inc(value);
    heldDuration.observe(value / 10);
    p.prom.duration.labels(...A).observe(value / 10);
  }
  p.local.requests.series(...B).inc();
  p.prom.requests.labels(...B).inc();
  p.local.requests.remove(...A);
  p.prom.requests.remove(...A);
  p.local.duration.remove(...A);
  p.prom.duration.remove(...A);
  await same(t, p, 'removed');
  held.inc(5); // a stale reference: counted into the family's series for A, now after B's
  p.prom.requests.labels(...A).inc(5);
  const fresh = p.local.requests.series(...A);
  t.equal(fresh, held, 'one series per label set');
  fresh.inc();
  p.prom.requests.labels(...A).inc();
  p.local.duration.series(...A).observe(0.25);
  p.prom.duration.labels(...A).observe(0.25);
  await same(t, p, 'counted again');
  p.local.requests.remove('no', 'such', 'series');
  p.local.requests.remove(...B);
  p.local.requests.series(...B).inc(3);
  heldDuration.observe(0.001);
  p.prom.requests.remove(...B);
  p.prom.requests.labels(...B).inc(3);
  p.prom.duration.labels(...A).observe(0.001);
  await same(t, p, 'the holder of a removed histogram series counts into the current one');
});

t.test('reset ends every series, as prom-client’s reset', async (t) => {
  const p = pair();
  const a = p.local.requests.series(...A);
  a.inc(2);
  p.prom.requests.labels(...A).inc(2);
  p.local.duration.series(...A).observe(0.3);
  p.prom.duration.labels(...A).observe(0.3);
  p.local.hits.inc(4);
  p.prom.hits.inc(4);
  p.ours.resetMetrics();
  p.theirs.resetMetrics();
  await same(t, p, 'reset');
  a.inc();
  p.prom.requests.labels(...A).inc();
  p.local.hits.inc();
  p.prom.hits.inc();
  await same(t, p, 'counted after the reset');
});

t.test('workers’ metrics merge as prom-client’s do', async (t) => {
  const workers = [pair(), pair()];
  for (const [w, p] of workers.entries()) {
    for (const value of VALUES.slice(w * 4)) {
      p.local.requests.series(...A).inc(value > 0 ? value : 1);
      p.prom.requests.labels(...A).inc(value > 0 ? value : 1);
      p.local.duration.series(...(w ? B : A)).observe(value);
      p.prom.duration.labels(...(w ? B : A)).observe(value);
    }
  }
  const merged = async (side: 'ours' | 'theirs') => {
    const parts = await Promise.all(workers.map((p) => p[side].getMetricsAsJSON()));
    return AggregatorRegistry.aggregate(parts as never).metrics();
  };
  t.equal(await merged('ours'), await merged('theirs'));
});

t.test("prom-client's checks: label count, negative or infinite values", async (t) => {
  const { local } = pair();
  t.throws(() => local.requests.series('only one'), /3 labels/);
  t.throws(() => local.requests.series(...A).inc(-1), RangeError);
  t.throws(() => local.requests.series(...A).inc(Infinity), RangeError);
  t.throws(() => local.duration.series(...A).observe(NaN), TypeError);
  t.throws(() => local.duration.series(...A).observe(Infinity), TypeError);
  t.throws(() => new LocalHistogram({ name: 'x_bad', help: 'h', labelNames: ['le'], buckets: [1], registers: [] }), /le is a reserved/);
  t.throws(() => new LocalHistogram({ name: 'x_bad', help: 'h', buckets: [1, 1], registers: [] }), /increase/);
});

t.test('label children are made once per set of values, whatever the arity, and values never collide', async (t) => {
  const made: string[][] = [];
  const three = new Children(3, (values) => (made.push(values), values.join('|')));
  t.equal(three.get('a', 'b', 'c'), 'a|b|c');
  t.equal(three.get('a', 'b', 'c'), 'a|b|c');
  t.equal(three.get('a\u0001b', '', 'c'), 'a\u0001b||c', 'a separator in a value is just a character');
  t.equal(three.get('a', '\u0001b', 'c'), 'a|\u0001b|c');
  t.same(made, [['a', 'b', 'c'], ['a\u0001b', '', 'c'], ['a', '\u0001b', 'c']], 'one make per set of values');
  const one = new Children(1, (values) => values);
  t.equal(one.get('x'), one.get('x'));
  t.same(one.get('y'), ['y']);
  const five = new Children(5, (values) => values);
  t.same(five.get('1', '2', '3', '4', '5'), ['1', '2', '3', '4', '5']);
  t.not(five.get('1', '2', '3', '4', '5'), five.get('1', '2', '3', '4', '6'));
});

t.test('label values that would join into one string stay two series', async (t) => {
  const registry = new Registry();
  const counter = new LocalCounter({ name: 'x_joined_total', help: 'h', labelNames: ['a', 'b'] as const, registers: [registry] });
  counter.series('a\u0001b', 'c').inc(1);
  counter.series('a', 'b\u0001c').inc(2);
  const values = (await registry.getMetricsAsJSON())[0]!.values;
  t.same(
    values.map((v) => [v.labels, v.value]),
    [
      [{ a: 'a\u0001b', b: 'c' }, 1],
      [{ a: 'a', b: 'b\u0001c' }, 2],
    ],
  );
});
