// What a ledger row stores of the text a client or provider influenced: clipped, without control
// characters, and well-formed (review: two messages cut inside different emoji were one key to
// PostgreSQL, and the multi-row upsert of the error rollups failed the whole batch).
import t from 'tap';
import { toRecord, type LedgerRow } from '../../plugins/cost/ledger-row.js';

const row = (over: Partial<LedgerRow>): LedgerRow => ({
  id: 'id', at: 0, requestId: 'r', kind: 'request', tenant: 't', keyId: 'k', provider: 'p', model: 'm', status: 500, errorCode: 'x', cacheHit: false,
  promptTokens: 0, completionTokens: 0, cachedTokens: 0, costNano: 0, savedNano: 0, latencyMs: 0, ttftMs: null, epoch: null, ...over,
}) as LedgerRow;

t.test('a text cut inside a surrogate pair keeps no half of it', async (t) => {
  const a = toRecord(row({ errorMessage: `${'x'.repeat(199)}😀 tail` })).error_message!;
  const b = toRecord(row({ errorMessage: `${'x'.repeat(199)}𝒜 tail` })).error_message!;
  t.equal(a, 'x'.repeat(199));
  t.equal(a, b, 'the same stored text, as PostgreSQL would have made them');
  t.equal(toRecord(row({ model: `m\u0000\n${'é'.repeat(3)}😀` })).model, 'mééé😀', 'whole pairs and control characters: pairs kept, controls dropped');
});
