// The dashboard in a real browser (Debian's Chromium, headless, driven by Playwright) against a real
// gateway in front of a simulated OpenAI: sign in with the admin key; create a key and copy its
// secret; use it through the OpenAI SDK; see the request and its cost in the charts; edit its limits
// and watch a 429; regenerate it and use the old secret during the grace period; revoke it and get
// 401; act on webhooks (replay) and experiments (stop, promote); test a provider. Every page, at 1280
// and 390 pixels wide, is checked by axe-core (WCAG 2.1 A/AA and best practices: no violation) and
// saved as a screenshot under test-artifacts/dashboard/, filled with the data made here.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import t from 'tap';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { GATEWAY_KEY, call, startGateway, type TestGateway } from '../helpers/gateway.js';
import { FakeProvider } from '../helpers/fake-provider.js';
import { openAIResponder, PROVIDER_KEYS } from '../helpers/fakes.js';
import { startReceiver, waitFor, type HttpReceiver } from '../helpers/receivers.js';
import { WIDTHS, accessibilityViolations, launchBrowser, screenshot } from '../helpers/browser.js';

const WEBHOOK_SECRET = 'a raw webhook secret of the operator, 32+ chars';
/** USD per token: the fixture's 32 tokens cost $0.0032 with `big`, readable in the charts. */
const BIG_PRICE = 1e-4;
const MINI_PRICE = 1e-5;

function catalogFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'modelgate-dashboard-')), 'models.json');
  const model = (id: string, native: string, price: number) => ({ provider: 'openai', id, native_id: native, price: { input: price, output: price }, quality: { score: 0.9 } });
  writeFileSync(file, JSON.stringify({ models: [model('big', 'gpt-4o', BIG_PRICE), model('mini', 'gpt-4o-mini', MINI_PRICE)] }));
  return file;
}

let upstream: FakeProvider;
let receiver: HttpReceiver;
let gateway: TestGateway;
let origin: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** What the browser said that it should not have: script errors, CSP refusals, failed calls. */
const complaints: string[] = [];

t.before(async () => {
  upstream = await FakeProvider.start(openAIResponder(PROVIDER_KEYS.openai));
  receiver = await startReceiver(Buffer.from(WEBHOOK_SECRET, 'utf8'));
  gateway = await startGateway({
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_MODEL_CATALOG: catalogFile(),
    MODELGATE_CACHE_ENABLED: 'false',
    MODELGATE_RETRIES: '0',
    MODELGATE_LEDGER_FLUSH_INTERVAL: '100',
    MODELGATE_DAILY_COST_LIMIT: '5',
    // What a request may cost at most (its reservation) is well above what it costs at these prices.
    MODELGATE_MAX_COST_PER_REQUEST: '1',
    MODELGATE_API_KEY_ROTATION_GRACE: '3600',
    MODELGATE_AB_TESTING_ENABLED: 'true',
    MODELGATE_AB_TESTING_CHECK_INTERVAL: '1',
    MODELGATE_WEBHOOKS_ENABLED: 'true',
    MODELGATE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    MODELGATE_WEBHOOK_ALLOW_PRIVATE: 'true',
    MODELGATE_WEBHOOK_RETRY_DELAY: '100',
    MODELGATE_CHAT_ALERTS_ENABLED: 'true',
    MODELGATE_CHAT_WEBHOOK_URL: `${receiver.url}/chat/T000/SECRETPATH`,
    MODELGATE_ALERT_RULES: '0.5:chat,0.8:chat',
  });
  origin = new URL(gateway.url).origin;
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  page = await context.newPage();
  page.on('console', (message) => {
    // The first look for a session, before signing in, is answered 401 by design.
    if (message.type() === 'error' && !/status of 401/.test(message.text())) complaints.push(message.text());
  });
  page.on('pageerror', (error) => complaints.push(String(error)));
});

t.teardown(async () => {
  await browser?.close();
  await gateway?.close();
  await receiver?.close();
  await upstream?.close();
});

const sdk = (apiKey: string) => new OpenAI({ apiKey, baseURL: gateway.url, maxRetries: 0 });
const chat = (apiKey: string, model = 'big', user?: string) => sdk(apiKey).chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello' }], ...(user ? { user } : {}) });
const statusOf = async (request: Promise<unknown>) => request.then(() => 200, (error: { status?: number }) => error.status ?? 0);
const go = async (hash: string) => {
  await page.goto(`${origin}/dashboard#${hash}`);
  await page.getByRole('heading', { level: 1 }).first().waitFor();
};
const dialog = () => page.getByRole('dialog');

let secret = '';
let keyId = '';

t.test('sign in with the admin key', async (t) => {
  await page.goto(`${origin}/dashboard`);
  await page.getByLabel('API key').fill(GATEWAY_KEY);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Pages' }).waitFor();
  const cookies = await context.cookies();
  const session = cookies.find((cookie) => cookie.name === 'modelgate_session');
  t.ok(session?.httpOnly, 'the session cookie is HttpOnly');
  t.equal(session?.sameSite, 'Strict');
  t.notOk(await page.evaluate('document.cookie'), 'scripts see no cookie');
  t.notMatch(await page.content(), GATEWAY_KEY, 'the key is not kept in the page');
});

t.test('create a key and copy its secret, shown once', async (t) => {
  await go('/settings/keys');
  await page.getByRole('button', { name: 'Create key' }).click();
  await dialog().getByLabel('Name', { exact: true }).fill('browser-app');
  await dialog().getByRole('button', { name: 'Create key' }).click();
  const shown = dialog().locator('.secret code');
  await shown.waitFor();
  secret = (await shown.textContent())!.trim();
  t.match(secret, /^uc_[A-Za-z0-9_-]{43}$/);
  t.match(await dialog().textContent(), /only time the secret is shown/i);
  await dialog().getByRole('button', { name: 'Copy key' }).click();
  await dialog().getByText(/copied/i).waitFor();
  t.equal(await page.evaluate('navigator.clipboard.readText()'), secret, 'the clipboard holds the secret');
  await dialog().getByRole('button', { name: 'Done' }).click();
  await page.getByRole('cell', { name: 'browser-app', exact: true }).waitFor();
  t.notMatch(await page.content(), secret, 'the secret is gone from the page once closed');
  const listed = await call(gateway.url, '/admin/keys?name=browser-app');
  keyId = listed.json.data[0].id;
  t.ok(keyId);
});

t.test('the key works through the OpenAI SDK; its request and cost appear in the charts', async (t) => {
  const reply = await chat(secret);
  t.ok(reply.choices[0]?.message.content);
  // The rollups are written in batches (MODELGATE_LEDGER_FLUSH_INTERVAL): the page is read again until they are.
  const filtered = `/usage?group_by=key&key_id=${keyId}`;
  t.ok(
    await waitFor(async () => {
      await go(filtered);
      const text = (await page.locator('main').textContent()) ?? '';
      return text.includes('$0.0032');
    }, 20_000),
    'the key\'s $0.0032 is in the usage page',
  );
  // The totals can be on the page a moment before the chart is drawn beside them: wait for it, briefly.
  const drawn = await page
    .locator('main canvas')
    .first()
    .waitFor({ state: 'visible', timeout: 5000 })
    .then(() => true, () => false);
  t.ok(drawn, 'drawn as a chart');
  await screenshot(page, 'usage-after-one-request');
});

t.test('edit its limits and watch a 429', async (t) => {
  await go('/settings/keys');
  await page.getByRole('button', { name: 'Edit browser-app' }).click();
  await dialog().getByLabel('Requests per minute').fill('1');
  await dialog().getByRole('button', { name: 'Save' }).click();
  await page.getByText('Key “browser-app” saved.').waitFor();
  const statuses: number[] = [];
  for (let i = 0; i < 3 && !statuses.includes(429); i++) statuses.push(await statusOf(chat(secret)));
  t.ok(statuses.includes(429), `refused with 429 once past 1 request a minute (${statuses.join(', ')})`);
  // Back to the gateway's limit, for what follows.
  await page.getByRole('button', { name: 'Edit browser-app' }).click();
  await dialog().getByLabel('Requests per minute').fill('');
  await dialog().getByRole('button', { name: 'Save' }).click();
  await page.getByText('Key “browser-app” saved.').waitFor();
  t.equal(await statusOf(chat(secret)), 200, 'the limit lifted');
});

let regenerated = '';

t.test('regenerate: the new secret once, and the old one works through its grace period', async (t) => {
  await page.getByRole('button', { name: 'Regenerate browser-app' }).click();
  await dialog().getByRole('button', { name: 'Regenerate' }).click();
  const shown = dialog().locator('.secret code');
  await shown.waitFor();
  regenerated = (await shown.textContent())!.trim();
  t.not(regenerated, secret);
  t.match(await dialog().textContent(), /old secret keeps working until/i, 'the grace period is shown');
  await dialog().getByRole('button', { name: 'Done' }).click();
  t.equal(await statusOf(chat(secret)), 200, 'the old secret, during its grace period');
  t.equal(await statusOf(chat(regenerated)), 200, 'the new secret');
});

t.test('revoke, confirmed, and the key gets 401', async (t) => {
  await page.getByRole('button', { name: 'Revoke browser-app' }).click();
  await dialog().getByRole('button', { name: 'Revoke key' }).click();
  await page.getByText('Key “browser-app” revoked.').waitFor();
  t.equal(await statusOf(chat(regenerated)), 401);
  t.equal(await statusOf(chat(secret)), 401, 'and the old secret with it');
});

t.test('webhooks: the delivery log and a replay', async (t) => {
  const endpoint = await call(gateway.url, '/admin/webhooks', { body: JSON.stringify({ url: `${receiver.url}/hooks`, description: 'ops receiver', event_types: ['key.created', 'key.revoked', 'key.regenerated'] }) });
  t.equal(endpoint.status, 201);
  await call(gateway.url, '/admin/keys', { body: JSON.stringify({ name: 'second-app' }) });
  const keyEvents = () => receiver.accepted.filter((hook) => String(hook.json?.type).startsWith('key.')).length;
  t.ok(await waitFor(() => keyEvents() > 0), 'a delivery arrived');
  await go('/alerts');
  await page.getByRole('button', { name: 'Deliveries of ops receiver' }).click();
  const replay = page.getByRole('button', { name: 'Replay' }).first();
  await replay.waitFor();
  const before = keyEvents();
  await replay.click();
  await page.getByText(/Replay queued/).waitFor();
  t.ok(await waitFor(() => keyEvents() > before), 'the replay was delivered');
});

t.test('experiments: results with intervals, stop, promote', async (t) => {
  const created = await call(gateway.url, '/admin/experiments', {
    body: JSON.stringify({
      name: 'big-vs-mini',
      match: { model: 'support-bot' },
      unit: 'user',
      arms: [
        { name: 'control', model: 'big', weight: 50 },
        { name: 'mini', model: 'mini', weight: 50 },
      ],
      metrics: ['cost'],
      primary_metric: 'cost',
      guardrails: ['error_rate'],
    }),
  });
  t.equal(created.status, 201);
  for (let i = 0; i < 24; i++) await chat(GATEWAY_KEY, 'support-bot', `user-${i}`);
  t.ok(
    await waitFor(async () => {
      const read = await call(gateway.url, `/admin/experiments/${created.json.id}`);
      return read.json.results.arms.every((arm: { requests: number }) => arm.requests > 0);
    }),
    'both arms have requests',
  );
  await go(`/experiments?id=${created.json.id}`);
  await page.getByText('mini', { exact: true }).first().waitFor();
  t.match(await page.locator('main').textContent(), /control[\s\S]*mini/);
  await screenshot(page, 'experiment-results');
  await page.getByRole('button', { name: 'Stop experiment' }).click();
  await dialog().getByRole('button', { name: 'Stop experiment' }).click();
  t.ok(await waitFor(async () => (await call(gateway.url, `/admin/experiments/${created.json.id}`)).json.finish_reason === 'stopped'), 'stopped');
  await page.getByRole('button', { name: 'Promote' }).first().click();
  await dialog().getByRole('button', { name: 'Promote' }).click();
  t.ok(await waitFor(async () => (await call(gateway.url, `/admin/experiments/${created.json.id}`)).json.promoted !== null), 'promoted');
});

t.test('providers: health and a connection test', async (t) => {
  await go('/providers');
  await page.getByRole('button', { name: 'Test openai' }).click();
  await page.getByText(/ok|200/i).first().waitFor();
  t.ok(upstream.requests.some((request) => request.url === '/v1/models'), 'the test called the provider');
});

const PAGES = [
  { name: 'overview', hash: '/' },
  { name: 'usage', hash: '/usage' },
  { name: 'providers', hash: '/providers' },
  { name: 'keys', hash: '/settings/keys' },
  { name: 'alerts', hash: '/alerts' },
  { name: 'experiments', hash: '/experiments' },
];

t.test('every page is accessible, fits 1280 and 390 pixels, and is saved as a screenshot', async (t) => {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    for (const { name, hash } of PAGES) {
      await go(hash);
      await page.waitForLoadState('networkidle');
      t.same(await accessibilityViolations(page), [], `${name} at ${width} px: no accessibility violation`);
      const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));
      t.ok(overflow <= 1, `${name} at ${width} px: nothing wider than the window (${overflow} px over)`);
      await screenshot(page, `${name}-${width}`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 900 });
});

t.test('a key that is not admin sees its own usage only', async (t) => {
  const made = await call(gateway.url, '/admin/keys', { body: JSON.stringify({ name: 'reader' }) });
  const own = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  t.teardown(() => own.close());
  const reader = await own.newPage();
  await reader.goto(`${origin}/dashboard`);
  await reader.getByLabel('API key').fill(made.json.key);
  await reader.getByRole('button', { name: 'Sign in' }).click();
  const nav = reader.getByRole('navigation', { name: 'Pages' });
  await nav.waitFor();
  t.same(await nav.getByRole('link').allTextContents(), ['Overview', 'Usage and costs']);
  await reader.goto(`${origin}/dashboard#/settings/keys`);
  await reader.getByRole('heading', { name: 'Page not found' }).waitFor();
  await reader.goto(`${origin}/dashboard#/`);
  await reader.waitForLoadState('networkidle');
  t.same(await accessibilityViolations(reader), [], 'its overview: no accessibility violation');
  await screenshot(reader, 'overview-not-admin');
});

t.test('an admin resumes paused traffic from the overview', async (t) => {
  // A gateway whose day's budget pauses traffic at half of $0.005: one request at $0.0032 does it.
  const paused = await startGateway({
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_MODEL_CATALOG: catalogFile(),
    MODELGATE_CACHE_ENABLED: 'false',
    MODELGATE_RETRIES: '0',
    MODELGATE_MAX_COST_PER_REQUEST: '1',
    MODELGATE_DAILY_COST_LIMIT: '0.005',
    MODELGATE_ALERT_RULES: '0.5:pause',
  });
  t.teardown(() => paused.close());
  const client = new OpenAI({ apiKey: GATEWAY_KEY, baseURL: paused.url, maxRetries: 0 });
  const small = () => client.chat.completions.create({ model: 'big', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 5 });
  await small();
  t.ok(await waitFor(async () => (await statusOf(small())) === 429), 'paid requests are refused while paused');
  const own = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  t.teardown(() => own.close());
  const admin = await own.newPage();
  await admin.goto(`${new URL(paused.url).origin}/dashboard`);
  await admin.getByLabel('API key').fill(GATEWAY_KEY);
  await admin.getByRole('button', { name: 'Sign in' }).click();
  await admin.getByText('Traffic paused').waitFor();
  await screenshot(admin, 'overview-paused');
  await admin.getByRole('button', { name: 'Resume traffic' }).click();
  await admin.getByRole('dialog').getByRole('button', { name: 'Resume traffic now' }).click();
  await admin.getByText('Traffic flowing').waitFor();
  t.equal((await call(paused.url, '/usage')).json.paused, null, 'the API says traffic flows');
  t.equal(await statusOf(small()), 200, 'and paid requests are served again');
});

t.test('sign out ends the session', async (t) => {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('API key').waitFor();
  const cookie = (await context.cookies()).find((entry) => entry.name === 'modelgate_session');
  t.notOk(cookie?.value, 'the cookie is gone');
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    t.same(await accessibilityViolations(page), [], `the sign-in page at ${width} px: no accessibility violation`);
    await screenshot(page, `sign-in-${width}`);
  }
  t.same(complaints, [], 'no script error, CSP refusal or failed call in the browser');
});
