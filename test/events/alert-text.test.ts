// The wording every alert channel shows: titles, facts and next steps for each event type, and
// how money, percentages and periods read.
import t from 'tap';
import { describeEvent } from '../../plugins/events/alert-text.js';
import { usd, percent, lastWindow } from '../../plugins/events/alert-format.js';
import type { EventMessage } from '../../plugins/events/types.js';

const at = '2026-11-25T14:00:00.000Z';
const event = (type: string, data: Record<string, unknown>): EventMessage => ({ type, timestamp: at, data });
const fact = (message: EventMessage, label: string) => describeEvent(message).facts.find(([l]) => l === label)?.[1];

const reached = {
  scope: 'global',
  key_id: null,
  period: 'day',
  period_key: '2026-11-25',
  threshold: 0.8,
  action: 'email',
  spent_usd: 8,
  limit_usd: 10,
  used_ratio: 0.8,
  resets_at: '2026-11-26T00:00:00.000Z',
};

t.test('money has two decimals, and sub-cent amounts keep up to six', async (t) => {
  t.equal(usd(8), '$8.00');
  t.equal(usd(1234.5), '$1,234.50');
  t.equal(usd(0.999), '$1.00');
  t.equal(usd(0), '$0.00');
  t.equal(usd(0.01), '$0.01');
  t.equal(usd(0.0042), '$0.0042');
  t.equal(usd(0.00012345678), '$0.000123');
  t.equal(usd(0.0000001), '<$0.000001');
  t.equal(usd(-2.5), '-$2.50');
  t.equal(usd(undefined), '—', 'a missing amount shows a dash');
  t.equal(percent(0.425), '42.5%');
  t.equal(percent(1), '100%');
  t.equal(lastWindow(300), 'the last 5 minutes');
  t.equal(lastWindow(60), 'the last minute');
  t.equal(lastWindow(90), 'the last 90 seconds');
});

t.test('a budget threshold below 100% says spending continues', async (t) => {
  const message = event('budget.threshold_reached', reached);
  const d = describeEvent(message);
  t.equal(d.title, 'Daily budget at 80%: $8.00 of $10.00 spent');
  t.equal(d.next, 'Requests continue; the next alert fires at the next threshold.');
  t.equal(fact(message, 'Budget'), "gateway's (all keys)");
  t.equal(fact(message, 'Spent'), '$8.00');
  t.equal(fact(message, 'Limit'), '$10.00');
  t.equal(fact(message, 'Period'), 'day 2026-11-25');
  t.equal(fact(message, 'Resets at'), '2026-11-26T00:00:00Z');
});

t.test('a pausing threshold says paid requests are refused until the reset or an admin resume', async (t) => {
  const d = describeEvent(event('budget.threshold_reached', { ...reached, period: 'month', period_key: '2026-11', action: 'pause', threshold: 0.9, spent_usd: 90, limit_usd: 100, used_ratio: 0.9 }));
  t.equal(d.title, 'Monthly budget at 90%: $90.00 of $100.00 spent');
  t.match(d.next, /^Paid requests are refused until 2026-11-26T00:00:00Z or until an admin resumes spending/);
  t.match(d.summary, /pauses spending/);
});

t.test("a key's budget at 100% refuses that key's requests until the reset", async (t) => {
  const message = event('budget.threshold_reached', { ...reached, scope: 'key', key_id: 'k_7', period: 'week', period_key: '2026-W48', threshold: 1, spent_usd: 10.5, used_ratio: 1.05 });
  const d = describeEvent(message);
  t.equal(d.title, 'Weekly budget of key k_7 at 100%: $10.50 of $10.00 spent');
  t.equal(d.next, 'Requests with key k_7 are refused until the budget resets at 2026-11-26T00:00:00Z.');
  t.equal(fact(message, 'Budget'), 'key k_7');
  t.equal(fact(message, 'Period'), 'ISO week 2026-W48');
});

t.test('resolved, exceeded, paused and resumed budgets', async (t) => {
  const resolved = describeEvent(event('budget.threshold_resolved', { ...reached, reason: 'admin_resume' }));
  t.equal(resolved.title, 'Daily budget alert at 80% resolved: an admin resumed spending');
  t.equal(describeEvent(event('budget.threshold_resolved', { ...reached, reason: 'period_reset' })).title, 'Daily budget alert at 80% resolved: the period reset');

  const exceeded = describeEvent(event('budget.exceeded', { ...reached, spent_usd: 10.2 }));
  t.equal(exceeded.title, 'Daily budget exceeded: $10.20 of $10.00 spent');
  t.equal(exceeded.next, 'Paid requests are refused until the budget resets at 2026-11-26T00:00:00Z.');

  const paused = describeEvent(event('budget.paused', { scope: 'global', period: 'month', period_key: '2026-11', threshold: 1, until: '2026-12-01T00:00:00.000Z' }));
  t.equal(paused.title, 'Budget paused: the monthly budget reached 100%');
  t.match(paused.next, /^Paid requests are refused until 2026-12-01T00:00:00Z or until an admin resumes spending/);

  const resumed = describeEvent(event('budget.resumed', { scope: 'global', period: 'month', period_key: '2026-11', reason: 'admin' }));
  t.equal(resumed.title, 'Budget resumed: an admin resumed spending');
  t.equal(resumed.next, 'Paid requests are served again.');
});

t.test('provider, circuit and error-rate events', async (t) => {
  const opened = describeEvent(event('provider.circuit_opened', { provider: 'openai', recovery_ms: 30_000 }));
  t.equal(opened.title, 'Circuit opened for openai');
  t.match(opened.next, /after 30 seconds/);
  t.equal(describeEvent(event('provider.circuit_closed', { provider: 'openai' })).title, 'Circuit closed for openai');

  const down = event('provider.down', { provider: 'openai', failures: 5, window_seconds: 60, last_error: 'HTTP 503' });
  t.equal(describeEvent(down).title, 'Provider openai is down');
  t.equal(fact(down, 'Last error'), 'HTTP 503');
  t.equal(fact(event('provider.down', { provider: 'openai', failures: 5, window_seconds: 60, last_error: null }), 'Last error'), '—');

  const recovered = event('provider.recovered', { provider: 'openai', down_since: '2026-11-25T13:48:00.000Z' });
  t.equal(describeEvent(recovered).title, 'Provider openai recovered');
  t.equal(fact(recovered, 'Down for'), '12 minutes');

  const high = describeEvent(event('error_rate.high', { error_rate: 0.42, threshold: 0.1, requests: 100, errors: 42, window_seconds: 300 }));
  t.equal(high.title, 'Error rate 42% over the last 5 minutes');
  t.equal(high.summary, '42 of 100 requests failed over the last 5 minutes, above the 10% threshold.');
  t.equal(describeEvent(event('error_rate.resolved', { error_rate: 0.03, threshold: 0.1, requests: 100, errors: 3, window_seconds: 300 })).title, 'Error rate back to 3% over the last 5 minutes');
});

t.test('rate limit, key and experiment events', async (t) => {
  t.equal(describeEvent(event('rate_limit.hit', { key_id: 'k_1', minute: '2026-11-25T13:59:00.000Z', refused: 12 })).title, 'Rate limit hit by key k_1: 12 requests refused');

  const created = event('key.created', { key_id: 'k_1', name: 'bot', expires_at: null, by_key_id: 'admin' });
  t.equal(describeEvent(created).title, 'API key created: bot (k_1)');
  t.equal(fact(created, 'Expires at'), 'never');
  t.equal(describeEvent(event('key.regenerated', { key_id: 'k_1', name: null, expires_at: null, by_key_id: null })).title, 'API key regenerated: k_1');
  t.match(describeEvent(event('key.revoked', { key_id: 'k_1', name: null, expires_at: null, by_key_id: null })).next, /refused/);

  const expiring = describeEvent(event('key.expiring_soon', { key_id: 'k_1', name: 'bot', expires_at: '2026-11-28T00:00:00.000Z', days_left: 3 }));
  t.equal(expiring.title, 'API key bot (k_1) expires in 3 days');
  t.match(expiring.next, /before 2026-11-28T00:00:00Z/);
  t.equal(describeEvent(event('key.expiring_soon', { key_id: 'k_1', name: null, expires_at: at, days_left: 1 })).title, 'API key k_1 expires in 1 day');

  const promoted = describeEvent(event('experiment.finished', { experiment_id: 'e1', name: 'cheap-vs-fast', reason: 'promoted', winner: 'b' }));
  t.equal(promoted.title, 'Experiment cheap-vs-fast finished: winner b');
  t.equal(promoted.next, "Variant b now serves the experiment's traffic.");
  t.equal(describeEvent(event('experiment.finished', { experiment_id: 'e1', name: 'x', reason: 'duration', winner: null })).title, 'Experiment x finished');
});

t.test('an unknown type lists its data fields', async (t) => {
  const d = describeEvent(event('cache.flushed', { entries: 12, by: 'admin', detail: { a: 1 } }));
  t.equal(d.title, 'Event cache.flushed');
  t.same(d.facts, [['entries', '12'], ['by', 'admin'], ['detail', '{"a":1}']]);
  t.equal(describeEvent(event('toString', {})).title, 'Event toString', 'a prototype name is not a known type');
});

t.test('every known type describes data with missing fields without throwing', async (t) => {
  for (const type of ['budget.threshold_reached', 'budget.threshold_resolved', 'budget.exceeded', 'budget.paused', 'budget.resumed', 'provider.circuit_opened', 'provider.circuit_closed', 'provider.down', 'provider.recovered', 'error_rate.high', 'error_rate.resolved', 'rate_limit.hit', 'key.created', 'key.regenerated', 'key.revoked', 'key.expiring_soon', 'experiment.finished']) {
    const d = describeEvent(event(type, {}));
    t.ok(d.title && d.summary && d.next, type);
    t.notMatch(d.title, /undefined|NaN/, type);
  }
});
