// What redactText masks — the gateway's configured secrets, whole or in part, and key-shaped
// strings — and what it leaves alone, so a provider's message still says what went wrong.
import t from 'tap';
import { defineSettings } from '../../core/settings.js';
import { redactDeep, redactText, rememberSecrets } from '../../core/redact.js';

const schema = defineSettings({
  TEST_PROVIDER_KEY: { type: 'string', secret: true, description: 'a provider key without a known prefix' },
  TEST_DATABASE_URL: { type: 'string', secret: true, description: 'a URL with a password' },
  TEST_WEBHOOK_URL: { type: 'string', secret: true, description: 'a URL whose path is the secret' },
  TEST_HEADERS: { type: 'object', secret: true, description: 'headers' },
  TEST_SHORT: { type: 'string', secret: true, description: 'too short to search for' },
  TEST_PUBLIC: { type: 'string', description: 'not a secret' },
});
rememberSecrets([schema], {
  TEST_PROVIDER_KEY: 'Zq8Wm3Kx7Lp2Rv9Tn4Bc',
  TEST_DATABASE_URL: 'postgres://gate:pA55w0rd-xyz@db.internal:5432/modelgate',
  TEST_WEBHOOK_URL: 'https://hooks.example.com/services/T0001/B0001/XyZ987abcDEF654ghiJKL',
  TEST_HEADERS: { authorization: 'Bearer hdr-Tok3n-5566778899' },
  TEST_SHORT: 'abc',
  TEST_PUBLIC: 'public-value-1234567890',
});

t.test('a configured secret is masked whole, by its first characters, and shortened with asterisks', async (t) => {
  t.equal(redactText('Invalid key Zq8Wm3Kx7Lp2Rv9Tn4Bc.'), 'Invalid key [REDACTED].', 'whole, and the sentence keeps its dot');
  t.equal(redactText('key Zq8Wm3Kx... was refused'), 'key [REDACTED]... was refused', 'its first 8 characters');
  t.equal(redactText('key Zq8Wm3Kx7Lp2****4Bc was refused'), 'key [REDACTED] was refused', 'a shortened copy goes whole');
  t.equal(redactText('key Zq8W****n4Bc was refused'), 'key [REDACTED] was refused', 'asterisks mark a shortened key of any kind');
});

t.test("a URL's password and a webhook's token are masked, not the words of its host or database", async (t) => {
  t.equal(redactText('password authentication failed for pA55w0rd-xyz'), 'password authentication failed for [REDACTED]');
  t.equal(redactText('database modelgate on db.internal'), 'database modelgate on db.internal');
  t.equal(redactText('posting to XyZ987abcDEF654ghiJKL failed'), 'posting to [REDACTED] failed');
  t.equal(redactText('header token hdr-Tok3n-5566778899 expired'), 'header token [REDACTED] expired');
});

t.test('settings not declared secret, and secrets too short to search for, are left alone', async (t) => {
  t.equal(redactText('public-value-1234567890 and abc'), 'public-value-1234567890 and abc');
});

t.test('key-shaped strings are masked whoever they belong to, keeping what names them', async (t) => {
  t.equal(redactText('Incorrect API key provided: sk-proj-****abcd.'), 'Incorrect API key provided: sk-[REDACTED].');
  t.equal(redactText('x-goog-api-key: AIzaSyD4f7Hk2LmQ9xWc3VbN8pRt'), 'x-goog-api-key: [REDACTED]');
  t.equal(redactText('x-api-key="opaque-value-12345"'), 'x-api-key="[REDACTED]"');
  t.equal(redactText('GET https://x.example/v1?key=secret123&alt=sse'), 'GET https://x.example/v1?key=[REDACTED]&alt=sse');
  t.equal(redactText('Authorization: Bearer tok3b9f0c1d2e8a'), 'Authorization: Bearer [REDACTED]');
  t.equal(redactText('jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJnYXRld2F5In0.c2lnbmF0dXJl ok'), 'jwt [REDACTED] ok');
  t.equal(redactText('gateway key uc_live_0123456789'), 'gateway key uc_[REDACTED]');
  t.equal(redactText('org org-Zk3Hq8Lm2Nc7Vb4X, project proj_Ab12Cd34Ef56Gh78'), 'org org-[REDACTED], project proj_[REDACTED]');
  t.equal(redactText('trace "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822c"'), 'trace "[REDACTED]"');
});

t.test("a provider's ordinary words, ids and model names survive", async (t) => {
  const ordinary = [
    "The model 'gpt-4o-mini-2024-07-18' does not exist or you do not have access to it.",
    'messages.0.content: Field required; max_tokens must be at most 8192',
    'Request req_011CA1b2c3d4e5f6g7h8i9j0 failed: overloaded_error (retry in 30s)',
    'request id 123e4567-e89b-12d3-a456-426614174000, a risk-free, task-based monkey business',
    'claude-sonnet-4-5-20250929 is temporarily unavailable',
  ];
  for (const text of ordinary) t.equal(redactText(text), text);
});

t.test('redactDeep masks strings at any depth and copies only what changed', async (t) => {
  const detail = [{ provider: 'custom', status: 500, message: 'bad key Zq8Wm3Kx7Lp2Rv9Tn4Bc' }, { provider: 'openai', status: 503, message: 'overloaded' }];
  const fields = { requestId: 'r1', detail };
  const masked = redactDeep(fields) as typeof fields;
  t.equal(masked.detail[0]!.message, 'bad key [REDACTED]');
  t.equal(masked.detail[1], detail[1], 'an unchanged element is the same object');
  t.equal(detail[0]!.message, 'bad key Zq8Wm3Kx7Lp2Rv9Tn4Bc', "the caller's object is not changed");
  const clean = { a: { b: ['c', 1, null] } };
  t.equal(redactDeep(clean), clean, 'nothing to mask: the value itself');
});

t.test('redaction is linear in the text: long runs of key characters do not make the patterns rescan them', async (t) => {
  // Quadratic before: 80,000 "a" took 27 s, "eyJ-" × 20,000 31 s; an unknown path of 14,000
  // letters held the event loop 2.4 s while its 404 was logged. Linear, 200 KB take milliseconds;
  // the bound below is two orders of magnitude above that and two below the quadratic time.
  const texts = {
    'letters': 'a'.repeat(200_000),
    'JWT prefixes': 'eyJ-'.repeat(50_000),
    'asterisks': '*'.repeat(200_000),
    'letters and asterisks': 'a*'.repeat(100_000),
    'key prefixes': 'sk-'.repeat(66_000),
    'an unclosed quote': `"${'a'.repeat(200_000)}`,
    'Bearer words': 'Bearer '.repeat(28_000),
    'org prefixes': 'org-'.repeat(50_000),
  };
  for (const [name, text] of Object.entries(texts)) {
    const started = performance.now();
    redactText(text);
    const ms = performance.now() - started;
    t.ok(ms < 2000, `${name}, ${text.length} characters: ${ms.toFixed(0)} ms`);
  }
  t.equal(redactText('token sk-****abcd and eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.sig'), 'token sk-[REDACTED] and [REDACTED]', 'the patterns still mask what they did');
});
