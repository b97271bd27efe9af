// The admin API of webhook endpoints (plugins/events/admin-routes.ts), on SQLite and PostgreSQL,
// served by the gateway's own HTTP server on port 0 behind a stand-in for the auth step: register,
// list and page, change, delete, the deliveries with their attempt logs, replay; every refusal with
// the field it names; the SSRF check's refusal passed through; the settings endpoint's rules. Every
// answer is checked against the OpenAPI document, and no log line may carry a registered URL.
import t, { type Test } from 'tap';
import { pino } from 'pino';
import { GatewayServer } from '../../core/server.js';
import { GatewayError } from '../../core/errors.js';
import type { LoggingSettings } from '../../core/logger.js';
import type { Route } from '../../core/pipeline.js';
import { API_VERSION, describeApi } from '../../core/openapi/document.js';
import type { Store } from '../../core/store/database.js';
import { ENGINES, openTestStore } from '../helpers/database.js';
import { documentProblems, ResponseChecker } from '../helpers/openapi.js';
import { webhookAdminRoutes, MAX_ATTEMPT_LOG } from '../../plugins/events/admin-routes.js';
import { Endpoints, MAX_ENDPOINTS, SETTINGS_ENDPOINT_ID } from '../../plugins/events/endpoints.js';
import { Outbox, newId, type Delivery } from '../../plugins/events/outbox.js';

const ADMIN = 'admin-key';
const TENANT = 'tenant-key';
const EVENT_TYPES = ['budget.threshold_reached', 'provider.down', 'key.expiring'];
/** A receiver's token in the URL's query: answered to the admin, never logged. */
const TOKEN = 'tok_7f3a9c1e5b2d';
const HOOK = `https://hooks.example.com/modelgate?token=${TOKEN}`;
/** How answers show it: the query's values masked. */
const SHOWN = 'https://hooks.example.com/modelgate?token=***';

const document = JSON.parse(JSON.stringify(describeApi({ version: API_VERSION, overrides: [], providers: ['openai'] })));
const checker = new ResponseChecker(document);

t.test('the document describes the webhook admin API validly', async (t) => {
  t.same(documentProblems(document), []);
  for (const path of ['/v1/admin/webhooks', '/v1/admin/webhooks/{id}', '/v1/admin/webhooks/{id}/deliveries', '/v1/admin/webhooks/{id}/deliveries/{delivery_id}/replay']) {
    t.ok(document.paths[path], path);
  }
});

interface Harness {
  url: string;
  store: Store;
  endpoints: Endpoints;
  outbox: Outbox;
  /** Every URL checkUrl was asked about, with allowPrivate. */
  checked: Array<[string, boolean]>;
  wakes: number;
  logs: string[];
}

/** checkUrl as the lead's SSRF guard answers: loopback and private hosts refused unless allowed. */
async function checkUrl(url: string, allowPrivate: boolean): Promise<string | undefined> {
  const host = new URL(url).hostname;
  if (host === 'unresolvable.example.com') throw new Error('getaddrinfo ENOTFOUND unresolvable.example.com');
  if (!allowPrivate && (host === 'localhost' || /^(127|10)\./.test(host))) return 'url points at a loopback or private address; set MODELGATE_WEBHOOK_ALLOW_PRIVATE=true to allow it';
  return undefined;
}

async function harness(t: Test, engine: (typeof ENGINES)[number]): Promise<Harness> {
  const store = await openTestStore(t, engine, { migrated: true });
  const logs: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void logs.push(line) });
  const h: Harness = { url: '', store, endpoints: new Endpoints(store), outbox: new Outbox(store), checked: [], wakes: 0, logs };
  const routes = webhookAdminRoutes({
    endpoints: h.endpoints,
    outbox: h.outbox,
    bodyIdleMs: 5_000,
    allowPrivate: false,
    eventTypes: EVENT_TYPES,
    checkUrl: (url, allowPrivate) => {
      h.checked.push([url, allowPrivate]);
      return checkUrl(url, allowPrivate);
    },
    wake: () => void h.wakes++,
  });
  const server = new GatewayServer({
    host: '127.0.0.1',
    port: 0,
    shutdownTimeoutMs: 1_000,
    limits: { headersTimeoutMs: 5_000, requestTimeoutMs: 10_000, keepAliveTimeoutMs: 5_000, maxConnections: 100 },
    logger,
    logging: { MODELGATE_LOG_REQUESTS: true, MODELGATE_LOG_ERRORS: true } as LoggingSettings,
    routes,
    // The auth step, reduced to its outcome: who the bearer is.
    chainFor: (route: Route) => async (ctx) => {
      const key = ctx.headers.authorization?.replace(/^Bearer /, '');
      if (key !== ADMIN && key !== TENANT) throw new GatewayError('invalid_api_key');
      ctx.principal = { keyId: key, tenant: 'default', admin: key === ADMIN };
      await route.handle(ctx);
    },
    observers: [],
  });
  const address = await server.listen();
  h.url = `http://127.0.0.1:${address.port}`;
  t.teardown(() => server.shutdown());
  return h;
}

interface Answer {
  status: number;
  body: any;
}

/** The operation in the document a path is served by. */
const operationOf = (path: string) =>
  path
    .replace(/\?.*$/, '')
    .replace(/^\/v1\/admin\/webhooks\/[^/]+/, '/v1/admin/webhooks/{id}')
    .replace(/\/deliveries\/[^/]+\/replay$/, '/deliveries/{delivery_id}/replay');

/** Sends a request as `key` (the admin's by default) and checks the answer against the document. */
async function call(t: Test, h: Harness, method: string, path: string, body?: unknown, key = ADMIN): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${h.url}${path}`, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await response.text();
  t.same(checker.problems(method, operationOf(path), { status: response.status, headers: response.headers, text }), [], `${method} ${path} → ${response.status}: as documented`);
  return { status: response.status, body: JSON.parse(text) };
}

/** Asserts a 4xx with its code and param. */
async function refused(t: Test, h: Harness, method: string, path: string, body: unknown, status: number, code: string, param: string | null, message?: RegExp): Promise<void> {
  const answer = await call(t, h, method, path, body);
  t.equal(answer.status, status, `${method} ${path} ${JSON.stringify(body)?.slice(0, 80)}: ${status}`);
  t.equal(answer.body.error?.code, code, `code ${code}`);
  t.equal(answer.body.error?.param, param, `param ${param}`);
  if (message) t.match(answer.body.error?.message, message);
}

/** Queues a delivery of a new event to `endpointId`. */
async function queue(h: Harness, endpointId: string, createdAt: number, type = 'provider.down'): Promise<Delivery> {
  const eventId = newId('msg');
  await h.outbox.add([{ eventId, eventType: type, channel: 'webhook', endpointId, payload: JSON.stringify({ type, timestamp: new Date(createdAt).toISOString(), data: {} }), createdAt }]);
  return (await h.outbox.list(endpointId, 100)).find((d) => d.event_id === eventId)!;
}

/**
 * Records `failures` failed attempts of `delivery` (a 500 each, a millisecond apart from its due
 * time), then, if `deliver`, a delivered one, as the dispatcher does after claiming it (the claim
 * itself is taken directly: the outbox's claim takes whatever is due first).
 */
async function attempt(h: Harness, delivery: Delivery, failures: number, deliver: boolean): Promise<void> {
  let at = delivery.next_attempt_at;
  for (let i = 0; i < failures + (deliver ? 1 : 0); i++) {
    await h.store.db.updateTable('event_outbox').set({ lease_holder: 'test', lease_until: at + 60_000 }).where('id', '=', delivery.id).execute();
    const current = (await h.outbox.get(delivery.id))!;
    if (i < failures) await h.outbox.failed(current, 'test', { statusCode: 500, latencyMs: 40 + i }, `HTTP 500 (${i + 1})`, { retryAt: at + 1 }, at);
    else await h.outbox.delivered(current, 'test', { statusCode: 204, latencyMs: 12 }, at);
    at += 1;
  }
}

for (const engine of ENGINES) {
  t.test(engine, async (t) => {
    const h = await harness(t, engine);

    t.test('an admin registers an endpoint and gets it back as registered', async (t) => {
      const created = await call(t, h, 'POST', '/v1/admin/webhooks', { url: HOOK, description: 'Ops pager', event_types: ['provider.down', 'budget.threshold_reached'] });
      t.equal(created.status, 201);
      t.match(created.body, { object: 'webhook_endpoint', url: SHOWN, description: 'Ops pager', event_types: ['provider.down', 'budget.threshold_reached'], enabled: true, disabled_reason: null, source: 'api' });
      t.match(created.body.id, /^wh_[0-9a-f]{24}$/);
      t.equal(created.body.created_at, created.body.updated_at);
      t.same(h.checked.at(-1), [HOOK, false], 'the URL was checked, with MODELGATE_WEBHOOK_ALLOW_PRIVATE');
      const one = await call(t, h, 'GET', `/v1/admin/webhooks/${created.body.id}`);
      t.same(one.body, created.body);
      const defaults = await call(t, h, 'POST', '/v1/admin/webhooks', { url: 'https://other.example.com/hook' });
      t.match(defaults.body, { event_types: ['*'], description: null, enabled: true }, 'every event type, by default');
      const disabled = await call(t, h, 'POST', '/v1/admin/webhooks', { url: 'https://third.example.com/hook', enabled: false, description: null });
      t.equal(disabled.body.enabled, false);
      t.equal((await h.endpoints.takers('provider.down', 0)).length, 2, 'fan-out sees the enabled ones at once');
    });

    t.test('a create is refused with the field that is wrong', async (t) => {
      const path = '/v1/admin/webhooks';
      await refused(t, h, 'POST', path, { url: HOOK, secret: 'x' }, 400, 'invalid_request', 'secret', /secret is not a known field/);
      await refused(t, h, 'POST', path, { description: 'no url' }, 400, 'invalid_request', 'url', /url is required/);
      await refused(t, h, 'POST', path, { url: '' }, 400, 'invalid_request', 'url');
      await refused(t, h, 'POST', path, { url: `https://a.example.com/${'x'.repeat(2048)}` }, 400, 'invalid_request', 'url');
      await refused(t, h, 'POST', path, { url: 42 }, 400, 'invalid_request', 'url');
      await refused(t, h, 'POST', path, { url: HOOK, description: 'x'.repeat(501) }, 400, 'invalid_request', 'description');
      await refused(t, h, 'POST', path, { url: HOOK, enabled: 'yes' }, 400, 'invalid_request', 'enabled');
      await refused(t, h, 'POST', path, { url: HOOK, event_types: [] }, 400, 'invalid_request', 'event_types');
      await refused(t, h, 'POST', path, { url: HOOK, event_types: ['provider.down', 'provider.down'] }, 400, 'invalid_request', 'event_types', /duplicate/);
      await refused(t, h, 'POST', path, { url: HOOK, event_types: Array.from({ length: 51 }, (_, i) => `t${i}`) }, 400, 'invalid_request', 'event_types');
      await refused(t, h, 'POST', path, { url: HOOK, event_types: ['provider.down', 'provider.dwon'] }, 400, 'invalid_request', 'event_types.1', /event_types\.1 is not an event type the gateway sends \("provider\.dwon"\)/);
      await refused(t, h, 'POST', path, '{"url":', 400, 'invalid_json', null);
      await refused(t, h, 'POST', path, [HOOK], 400, 'invalid_request', null);
      const large = await call(t, h, 'POST', path, { url: HOOK, description: 'x'.repeat(20_000) });
      t.equal(large.status, 413, 'a body over 16 KB');
    });

    t.test("the SSRF check's refusal passes through, naming url", async (t) => {
      for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost/hook', 'http://10.0.0.7/hook']) {
        await refused(t, h, 'POST', '/v1/admin/webhooks', { url }, 400, 'invalid_request', 'url', /loopback or private address; set MODELGATE_WEBHOOK_ALLOW_PRIVATE=true/);
      }
      await refused(t, h, 'POST', '/v1/admin/webhooks', { url: 'https://unresolvable.example.com/hook' }, 400, 'invalid_request', 'url', /url could not be checked/);
      t.equal((await h.endpoints.all()).filter((e) => /127|localhost|10\.0|unresolvable/.test(e.url)).length, 0, 'none was registered');
    });

    t.test('the list pages in registration order with limit and after', async (t) => {
      for (let i = 0; i < 3; i++) await call(t, h, 'POST', '/v1/admin/webhooks', { url: `https://page${i}.example.com/hook` });
      const all = (await h.endpoints.all()).map((e) => e.id);
      t.equal(all.length, 6);
      const whole = await call(t, h, 'GET', '/v1/admin/webhooks');
      t.same(whole.body.data.map((e: { id: string }) => e.id), all, 'default limit 20: all of them');
      t.match(whole.body, { object: 'list', has_more: false, first_id: all[0], last_id: all[5] });
      const seen: string[] = [];
      let after: string | undefined;
      for (let page = 0; page < 3; page++) {
        const answer = await call(t, h, 'GET', `/v1/admin/webhooks?limit=2${after ? `&after=${after}` : ''}`);
        t.equal(answer.body.data.length, 2);
        t.equal(answer.body.has_more, page < 2, `page ${page + 1}: has_more`);
        seen.push(...answer.body.data.map((e: { id: string }) => e.id));
        after = answer.body.last_id;
      }
      t.same(seen, all, 'the pages together are the list, each endpoint once');
      const empty = await call(t, h, 'GET', `/v1/admin/webhooks?after=${all[5]}`);
      t.same(empty.body, { object: 'list', data: [], first_id: null, last_id: null, has_more: false });
      await refused(t, h, 'GET', '/v1/admin/webhooks?limit=0', undefined, 400, 'invalid_request', 'limit');
      await refused(t, h, 'GET', '/v1/admin/webhooks?limit=101', undefined, 400, 'invalid_request', 'limit');
      await refused(t, h, 'GET', '/v1/admin/webhooks?limit=ten', undefined, 400, 'invalid_request', 'limit');
      await refused(t, h, 'GET', '/v1/admin/webhooks?after=key_1', undefined, 400, 'invalid_request', 'after');
      await refused(t, h, 'GET', `/v1/admin/webhooks?after=wh_${'0'.repeat(24)}`, undefined, 400, 'invalid_request', 'after', /names no webhook endpoint/);
    });

    t.test('an unknown or malformed id is 404 naming id', async (t) => {
      for (const id of ['wh_nope', `wh_${'0'.repeat(24)}`, 'key_abc', `wh_${'A'.repeat(24)}`]) {
        await refused(t, h, 'GET', `/v1/admin/webhooks/${id}`, undefined, 404, 'webhook_not_found', 'id');
        await refused(t, h, 'PATCH', `/v1/admin/webhooks/${id}`, { enabled: false }, 404, 'webhook_not_found', 'id');
        await refused(t, h, 'DELETE', `/v1/admin/webhooks/${id}`, undefined, 404, 'webhook_not_found', 'id');
        await refused(t, h, 'GET', `/v1/admin/webhooks/${id}/deliveries`, undefined, 404, 'webhook_not_found', 'id');
      }
      await refused(t, h, 'DELETE', `/v1/admin/webhooks/${SETTINGS_ENDPOINT_ID}`, undefined, 404, 'webhook_not_found', 'id', undefined);
    });

    t.test('a change answers the endpoint as changed, its URL checked again', async (t) => {
      const id = (await call(t, h, 'POST', '/v1/admin/webhooks', { url: HOOK })).body.id;
      const path = `/v1/admin/webhooks/${id}`;
      const changed = await call(t, h, 'PATCH', path, { url: 'https://new.example.com/hook?token=second', description: 'Renamed', event_types: ['key.expiring'] });
      t.equal(changed.status, 200);
      t.match(changed.body, { id, url: 'https://new.example.com/hook?token=***', description: 'Renamed', event_types: ['key.expiring'], enabled: true });
      t.same(h.checked.at(-1), ['https://new.example.com/hook?token=second', false]);
      t.same((await call(t, h, 'PATCH', path, { description: null })).body.description, null, 'null clears the description');
      await refused(t, h, 'PATCH', path, { url: 'http://127.0.0.1/hook' }, 400, 'invalid_request', 'url', /MODELGATE_WEBHOOK_ALLOW_PRIVATE/);
      await refused(t, h, 'PATCH', path, {}, 400, 'invalid_request', null);
      await refused(t, h, 'PATCH', path, { source: 'settings' }, 400, 'invalid_request', 'source');
      await refused(t, h, 'PATCH', path, { event_types: ['nope'] }, 400, 'invalid_request', 'event_types.0');
      t.equal((await h.endpoints.get(id))!.url, 'https://new.example.com/hook?token=second', 'a refused change changed nothing');
    });

    t.test('disabling an endpoint skips its pending deliveries; re-enabling clears the reason', async (t) => {
      const id = (await call(t, h, 'POST', '/v1/admin/webhooks', { url: 'https://disable.example.com/hook' })).body.id;
      const pending = await queue(h, id, Date.now());
      const done = await queue(h, id, Date.now() + 1);
      await attempt(h, done, 0, true);
      await h.endpoints.disable(id, 'gone');
      t.equal((await call(t, h, 'GET', `/v1/admin/webhooks/${id}`)).body.disabled_reason, 'gone', 'a 410 is shown');
      const enabled = await call(t, h, 'PATCH', `/v1/admin/webhooks/${id}`, { enabled: true });
      t.match(enabled.body, { enabled: true, disabled_reason: null });
      const off = await call(t, h, 'PATCH', `/v1/admin/webhooks/${id}`, { enabled: false });
      t.match(off.body, { enabled: false, disabled_reason: 'admin' });
      t.match(await h.outbox.get(pending.id), { status: 'skipped', last_error: 'endpoint disabled' });
      t.match(await h.outbox.get(done.id), { status: 'delivered' }, 'a finished delivery stays as it was');
    });

    t.test('a delete answers deleted, skips pending deliveries, and the id is gone', async (t) => {
      const id = (await call(t, h, 'POST', '/v1/admin/webhooks', { url: 'https://delete.example.com/hook' })).body.id;
      const pending = await queue(h, id, Date.now());
      const deleted = await call(t, h, 'DELETE', `/v1/admin/webhooks/${id}`);
      t.equal(deleted.status, 200);
      t.same(deleted.body, { id, object: 'webhook_endpoint', deleted: true });
      t.match(await h.outbox.get(pending.id), { status: 'skipped', last_error: 'endpoint deleted' });
      await refused(t, h, 'GET', `/v1/admin/webhooks/${id}`, undefined, 404, 'webhook_not_found', 'id');
      await refused(t, h, 'DELETE', `/v1/admin/webhooks/${id}`, undefined, 404, 'webhook_not_found', 'id');
      t.notOk((await h.endpoints.all()).some((e) => e.id === id));
    });

    t.test('the deliveries list, newest first, with the attempt log, filtered and paged', async (t) => {
      const id = (await call(t, h, 'POST', '/v1/admin/webhooks', { url: 'https://deliveries.example.com/hook' })).body.id;
      const other = (await call(t, h, 'POST', '/v1/admin/webhooks', { url: 'https://elsewhere.example.com/hook' })).body.id;
      const start = Date.now() - 60_000;
      const retried = await queue(h, id, start, 'budget.threshold_reached');
      const delivered = await queue(h, id, start + 1_000);
      const waiting = await queue(h, id, start + 2_000);
      const noisy = await queue(h, id, start + 3_000);
      const elsewhere = await queue(h, other, start + 4_000);
      await attempt(h, retried, 2, false);
      await attempt(h, delivered, 1, true);
      await attempt(h, noisy, MAX_ATTEMPT_LOG + 2, false);

      const path = `/v1/admin/webhooks/${id}/deliveries`;
      const all = await call(t, h, 'GET', path);
      t.equal(all.status, 200);
      t.same(all.body.data.map((d: { id: string }) => d.id), [noisy.id, waiting.id, delivered.id, retried.id], "newest first, this endpoint's only");
      const [n, w, d, r] = all.body.data;
      t.match(r, {
        object: 'webhook_delivery',
        event_id: retried.event_id,
        event_type: 'budget.threshold_reached',
        status: 'pending',
        attempts: 2,
        delivered_at: null,
        last_status_code: 500,
        last_latency_ms: 41,
        last_error: 'HTTP 500 (2)',
        replay_of: null,
      });
      t.equal(r.next_attempt_at, new Date(start + 2).toISOString(), 'pending: when it is tried next');
      t.equal(r.created_at, new Date(start).toISOString());
      t.same(r.attempt_log, [
        { at: new Date(start).toISOString(), ok: false, status_code: 500, latency_ms: 40, error: 'HTTP 500 (1)' },
        { at: new Date(start + 1).toISOString(), ok: false, status_code: 500, latency_ms: 41, error: 'HTTP 500 (2)' },
      ]);
      t.match(d, { status: 'delivered', attempts: 2, next_attempt_at: null, delivered_at: new Date(start + 1_001).toISOString(), last_status_code: 204, last_latency_ms: 12, last_error: null });
      t.same(d.attempt_log.map((a: { ok: boolean; status_code: number }) => [a.ok, a.status_code]), [[false, 500], [true, 204]]);
      t.match(w, { status: 'pending', attempts: 0, attempt_log: [], last_status_code: null });
      t.equal(n.attempts, MAX_ATTEMPT_LOG + 2);
      t.equal(n.attempt_log.length, MAX_ATTEMPT_LOG, `at most the last ${MAX_ATTEMPT_LOG} attempts`);
      t.equal(n.attempt_log.at(-1).error, `HTTP 500 (${MAX_ATTEMPT_LOG + 2})`, 'the latest kept');
      t.equal(n.attempt_log[0].error, 'HTTP 500 (3)', 'the oldest dropped');
      t.notOk('payload' in n, 'no payload');

      const first = await call(t, h, 'GET', `${path}?limit=3`);
      t.match(first.body, { has_more: true, first_id: noisy.id, last_id: delivered.id });
      const second = await call(t, h, 'GET', `${path}?limit=3&after=${first.body.last_id}`);
      t.same(second.body.data.map((x: { id: string }) => x.id), [retried.id]);
      t.equal(second.body.has_more, false);
      const onlyDelivered = await call(t, h, 'GET', `${path}?status=delivered`);
      t.same(onlyDelivered.body.data.map((x: { id: string }) => x.id), [delivered.id], 'status filter');
      const pendingPage = await call(t, h, 'GET', `${path}?status=pending&limit=1&after=${noisy.id}`);
      t.same(pendingPage.body.data.map((x: { id: string }) => x.id), [waiting.id], 'status filter with a cursor');
      t.equal(pendingPage.body.has_more, true);
      t.same((await call(t, h, 'GET', `${path}?status=skipped`)).body.data, []);

      await refused(t, h, 'GET', `${path}?status=lost`, undefined, 400, 'invalid_request', 'status');
      await refused(t, h, 'GET', `${path}?limit=500`, undefined, 400, 'invalid_request', 'limit');
      await refused(t, h, 'GET', `${path}?after=wh_123`, undefined, 400, 'invalid_request', 'after');
      await refused(t, h, 'GET', `${path}?after=${elsewhere.id}`, undefined, 400, 'invalid_request', 'after', /no delivery of this endpoint/);
      await refused(t, h, 'GET', `${path}?after=dlv_${'0'.repeat(24)}`, undefined, 400, 'invalid_request', 'after');
    });

    t.test('replay queues a new delivery of the same event and wakes the dispatcher', async (t) => {
      const id = (await call(t, h, 'POST', '/v1/admin/webhooks', { url: 'https://replay.example.com/hook' })).body.id;
      const other = (await call(t, h, 'POST', '/v1/admin/webhooks', { url: 'https://replay-other.example.com/hook' })).body.id;
      const original = await queue(h, id, Date.now() - 5_000);
      await attempt(h, original, 1, true);
      const foreign = await queue(h, other, Date.now() - 5_000);
      const wakes = h.wakes;
      const path = `/v1/admin/webhooks/${id}/deliveries/${original.id}/replay`;
      const replay = await call(t, h, 'POST', path);
      t.equal(replay.status, 202);
      t.match(replay.body, { object: 'webhook_delivery', event_id: original.event_id, event_type: original.event_type, status: 'pending', attempts: 0, replay_of: original.id, attempt_log: [], delivered_at: null });
      t.not(replay.body.id, original.id);
      t.match(replay.body.id, /^dlv_[0-9a-f]{24}$/);
      t.ok(Date.parse(replay.body.next_attempt_at) <= Date.now(), 'due now');
      t.equal(h.wakes, wakes + 1, 'the dispatcher was woken');
      const stored = await h.outbox.get(replay.body.id);
      t.match(stored, { endpoint_id: id, channel: 'webhook', payload: original.payload, status: 'pending' }, 'the same message, to the same endpoint');
      const listed = await call(t, h, 'GET', `/v1/admin/webhooks/${id}/deliveries?limit=1`);
      t.equal(listed.body.data[0].id, replay.body.id, 'listed first, newest');
      t.match(await h.outbox.get(original.id), { status: 'delivered' }, 'the original stays as it was');

      await refused(t, h, 'POST', `/v1/admin/webhooks/${id}/deliveries/${foreign.id}/replay`, undefined, 404, 'delivery_not_found', 'delivery_id');
      await refused(t, h, 'POST', `/v1/admin/webhooks/${id}/deliveries/dlv_${'0'.repeat(24)}/replay`, undefined, 404, 'delivery_not_found', 'delivery_id');
      await refused(t, h, 'POST', `/v1/admin/webhooks/${id}/deliveries/nope/replay`, undefined, 404, 'delivery_not_found', 'delivery_id');
      await refused(t, h, 'POST', `/v1/admin/webhooks/wh_${'0'.repeat(24)}/deliveries/${original.id}/replay`, undefined, 404, 'webhook_not_found', 'id');
      await call(t, h, 'PATCH', `/v1/admin/webhooks/${id}`, { enabled: false });
      await refused(t, h, 'POST', path, undefined, 409, 'webhook_disabled', null, /disabled: enable it/);
      t.equal(h.wakes, wakes + 1, 'no refused replay woke the dispatcher');
    });

    t.test('the settings endpoint may only be enabled or disabled, and not deleted', async (t) => {
      const settingsUrl = `https://settings.example.com/hook?token=${TOKEN}`;
      await h.endpoints.bootstrap(settingsUrl, ['*']);
      const path = `/v1/admin/webhooks/${SETTINGS_ENDPOINT_ID}`;
      const one = await call(t, h, 'GET', path);
      t.match(one.body, { id: SETTINGS_ENDPOINT_ID, source: 'settings', url: '(MODELGATE_WEBHOOK_URL)', event_types: ['*'], enabled: true });
      t.notOk(JSON.stringify(await h.endpoints.get(SETTINGS_ENDPOINT_ID)).includes('settings.example.com'), 'the secret setting is not stored');
      const listed = await call(t, h, 'GET', '/v1/admin/webhooks?limit=100');
      t.ok(listed.body.data.some((e: { id: string }) => e.id === SETTINGS_ENDPOINT_ID), 'it is listed');
      await refused(t, h, 'PATCH', path, { url: 'https://elsewhere.example.com/' }, 400, 'invalid_request', 'url', /comes from MODELGATE_WEBHOOK_URL/);
      await refused(t, h, 'PATCH', path, { event_types: ['provider.down'] }, 400, 'invalid_request', 'event_types', /comes from MODELGATE_WEBHOOK_URL/);
      await refused(t, h, 'PATCH', path, { enabled: false, description: 'mine' }, 400, 'invalid_request', 'description', /MODELGATE_WEBHOOK_URL/);
      const pending = await queue(h, SETTINGS_ENDPOINT_ID, Date.now());
      const off = await call(t, h, 'PATCH', path, { enabled: false });
      t.match(off.body, { id: SETTINGS_ENDPOINT_ID, enabled: false, url: '(MODELGATE_WEBHOOK_URL)', event_types: ['*'] });
      await h.endpoints.bootstrap(settingsUrl, ['*']);
      t.equal((await h.endpoints.get(SETTINGS_ENDPOINT_ID))!.enabled, false, "an admin's disabling outlasts a restart");
      t.match(await h.outbox.get(pending.id), { status: 'skipped' });
      t.equal((await call(t, h, 'PATCH', path, { enabled: true })).body.enabled, true);
      await refused(t, h, 'DELETE', path, undefined, 400, 'invalid_request', 'id', /comes from MODELGATE_WEBHOOK_URL/);
      t.ok(await h.endpoints.get(SETTINGS_ENDPOINT_ID), 'still there');
    });

    t.test('a key that is not an admin key is refused everywhere with 403', async (t) => {
      const id = (await h.endpoints.all())[0]!.id;
      const delivery = await queue(h, id, Date.now());
      const before = await h.endpoints.count();
      for (const [method, path, body] of [
        ['POST', '/v1/admin/webhooks', { url: HOOK }],
        ['GET', '/v1/admin/webhooks', undefined],
        ['GET', `/v1/admin/webhooks/${id}`, undefined],
        ['PATCH', `/v1/admin/webhooks/${id}`, { enabled: false }],
        ['DELETE', `/v1/admin/webhooks/${id}`, undefined],
        ['GET', `/v1/admin/webhooks/${id}/deliveries`, undefined],
        ['POST', `/v1/admin/webhooks/${id}/deliveries/${delivery.id}/replay`, undefined],
      ] as const) {
        const answer = await call(t, h, method, path, body, TENANT);
        t.equal(answer.status, 403, `${method} ${path}`);
        t.equal(answer.body.error.code, 'admin_required');
      }
      t.equal(await h.endpoints.count(), before, 'nothing was registered or deleted');
      t.match(await h.endpoints.get(id), { enabled: true }, 'nor disabled');
    });

    t.test(`at most ${MAX_ENDPOINTS} endpoints: the next is refused 409`, async (t) => {
      for (let n = await h.endpoints.count(); n < MAX_ENDPOINTS; n++) await h.endpoints.create({ url: `https://bulk${n}.example.com/`, description: null, eventTypes: ['*'], enabled: true });
      await refused(t, h, 'POST', '/v1/admin/webhooks', { url: 'https://one-too-many.example.com/' }, 409, 'too_many_webhooks', null, /100 webhook endpoints, the most it takes: delete one first/);
      t.equal(await h.endpoints.count(), MAX_ENDPOINTS);
    });

    t.test('no log line carries a registered URL or its token', async (t) => {
      t.ok(h.logs.length > 0, 'there are log lines');
      t.ok(h.logs.some((line) => line.includes('webhooks: endpoint registered')), 'registrations are logged');
      t.notOk(h.logs.some((line) => line.includes(TOKEN) || line.includes('hooks.example.com')), 'without their URL');
    });
  });
}
