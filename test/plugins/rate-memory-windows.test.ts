// The embedded store's synchronous windows (plugins/rate/memory-windows.ts) decide exactly as
// rate-limiter-flexible's memory limiters through admit() did: the same random sequences of
// requests, keys and token counts through both, the same decisions, refusals and readings.
import t from 'tap';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { admit, correctTokens } from '../../plugins/rate/admission.js';
import { buildLimiters, type Limits } from '../../plugins/rate/limiters.js';
import { admitInMemory, memoryLimits, Windows } from '../../plugins/rate/memory-windows.js';

/** A small seeded generator, so a failure repeats. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const CASES: Array<{ name: string; limits: Limits }> = [
  { name: 'burst above RPM', limits: { rpm: 5, burst: 9, rph: 30, tpm: 400 } },
  { name: 'no burst (BURST ≤ RPM)', limits: { rpm: 6, burst: 3, rph: 10, tpm: 250 } },
  { name: 'the hour is the tighter limit', limits: { rpm: 20, burst: 25, rph: 12, tpm: 10_000 } },
];

for (const { name, limits } of CASES) {
  t.test(`same decisions as rate-limiter-flexible: ${name}`, async (t) => {
    const reference = buildLimiters(limits, (prefix, points, duration) => new RateLimiterMemory({ keyPrefix: prefix, points, duration }));
    const windows = memoryLimits(limits);
    const next = random(limits.rpm * 7919 + limits.tpm);
    let refusals = 0;
    for (let i = 0; i < 300; i++) {
      const key = `key-${Math.floor(next() * 3)}`;
      // Now and then larger than the whole TPM (refused outright), sometimes no tokens at all (non-chat routes).
      const roll = next();
      const tokens = roll < 0.05 ? limits.tpm + 1 : roll < 0.15 ? 0 : Math.ceil(next() * 90);
      const expected = await admit(reference, limits, key, tokens);
      const got = admitInMemory(windows, limits, key, tokens);
      const where = `request ${i} (${key}, ${tokens} tokens)`;
      t.same(
        { admitted: got.admitted, refusedBy: got.refusedBy, refusedLimit: got.refusedLimit, never: got.never, requests: got.requests.remaining, tokens: got.tokens.remaining },
        { admitted: expected.admitted, refusedBy: expected.refusedBy, refusedLimit: expected.refusedLimit, never: expected.never, requests: expected.requests.remaining, tokens: expected.tokens.remaining },
        where,
        { diagnostic: false },
      );
      t.equal(got.requests.limit, expected.requests.limit, `${where}: limit`, { diagnostic: false });
      // The reset times are read a few ms apart in the two runs.
      t.ok(Math.abs(got.requests.resetMs - expected.requests.resetMs) < 100, `${where}: requests reset`, { diagnostic: false });
      t.ok(Math.abs(got.retryAfterMs - expected.retryAfterMs) < 100, `${where}: retry after`, { diagnostic: false });
      if (!got.admitted) refusals++;
      // Both corrected by the same real usage afterwards.
      const used = Math.floor(next() * 120);
      if (expected.tokensTaken) await correctTokens(key, expected.tokensTaken, used);
      if (got.tokensTaken) await correctTokens(key, got.tokensTaken, used);
      t.equal(Boolean(got.tokensTaken), Boolean(expected.tokensTaken), `${where}: tokens taken`, { diagnostic: false });
    }
    // The sequences must have reached the limits, or the comparison proved little.
    t.ok(refusals > 20, `${refusals} refusals compared`);
  });
}

t.test('windows end: a new one starts with the next request, and expired ones are swept', async (t) => {
  const windows = new Windows(3, 1000);
  const now = 1_000_000;
  t.equal(windows.add('a', 1, now).value, 1);
  t.equal(windows.add('a', 1, now + 999).value, 2, 'same window until it ends');
  t.equal(windows.add('a', 1, now + 1000).value, 1, 'a new window once it has ended');
  t.equal(windows.read('a', now + 2000), undefined, 'no open window to read after its end');
  for (let i = 0; i < 5000; i++) windows.add(`k${i}`, 1, now + i * 10);
  // Keys whose windows ended were swept as the map grew: it holds about the live ones, not all 5,000.
  t.ok(windows.size < 1200, `${windows.size} windows held`);
});
