// The dashboard's sign-in through a real gateway: an API key exchanged for an HttpOnly, SameSite=Strict
// cookie that the /v1 API then accepts; changes need the session's CSRF token; sign-out, revocation,
// regeneration (admin rights end with the old secret) and a foreign site's sign-in are refused.
import t from 'tap';
import { GATEWAY_KEY, call, startGateway, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway;
let origin: string;

t.before(async () => {
  gateway = await startGateway({ MODELGATE_API_KEY_ROTATION_GRACE: '3600' });
  origin = new URL(gateway.url).origin;
});
t.teardown(() => gateway.close());

interface Signed {
  cookie: string;
  csrf: string;
  body: any;
  setCookie: string;
}

async function signIn(key: string, headers: Record<string, string> = {}): Promise<Signed> {
  const response = await call(origin, '/dashboard/session', { key: null, body: JSON.stringify({ key }), headers });
  const setCookie = response.headers.get('set-cookie') ?? '';
  return { cookie: setCookie.split(';')[0]!, csrf: response.json?.csrf_token, body: response.json, setCookie };
}

const withSession = (session: Signed, init: { method?: string; body?: unknown; csrf?: boolean } = {}) => ({
  key: null,
  method: init.method,
  body: init.body === undefined ? undefined : JSON.stringify(init.body),
  headers: { cookie: session.cookie, ...(init.csrf === false ? {} : { 'x-csrf-token': session.csrf }) },
});

async function newKey(body: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const created = await call(gateway.url, '/admin/keys', { body: JSON.stringify(body) });
  return created.json;
}

t.test('the admin key signs in: an HttpOnly, SameSite=Strict cookie for the whole gateway, no key kept', async (t) => {
  const session = await signIn(GATEWAY_KEY);
  t.equal(session.body.object, 'dashboard_session');
  t.equal(session.body.key_id, 'bootstrap');
  t.equal(session.body.admin, true);
  t.match(session.body.csrf_token, /^[A-Za-z0-9_-]{43}$/);
  t.ok(Date.parse(session.body.expires_at) > Date.now() + 7 * 3600_000, 'eight hours by default');
  t.match(session.setCookie, /^modelgate_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Strict$/);
  t.notMatch(session.setCookie, /Secure/, 'plain http: a Secure cookie would never come back');
  t.notMatch(JSON.stringify(session.body), GATEWAY_KEY, 'the key is not in the answer');

  const again = await call(origin, '/dashboard/session', { key: null, headers: { cookie: session.cookie } });
  t.equal(again.status, 200);
  t.equal(again.json.csrf_token, session.csrf, 'a reloaded page gets its CSRF token back');
  t.equal(again.headers.get('cache-control'), 'no-store');

  const keys = await call(gateway.url, '/admin/keys', withSession(session));
  t.equal(keys.status, 200, 'the admin API answers the cookie');
  t.equal((await call(gateway.url, '/usage', withSession(session))).status, 200);
});

t.test('behind TLS the cookie is Secure', async (t) => {
  const session = await signIn(GATEWAY_KEY, { 'x-forwarded-proto': 'https' });
  t.match(session.setCookie, /; Secure$/);
});

t.test('changes need the CSRF token; reads do not', async (t) => {
  const session = await signIn(GATEWAY_KEY);
  const without = await call(gateway.url, '/admin/keys', withSession(session, { body: { name: 'no-csrf' }, csrf: false }));
  t.equal(without.status, 403);
  t.equal(without.json.error.code, 'csrf_failed');
  const wrong = await call(gateway.url, '/admin/keys', { ...withSession(session, { body: { name: 'wrong-csrf' }, csrf: false }), headers: { cookie: session.cookie, 'x-csrf-token': 'x'.repeat(43) } });
  t.equal(wrong.status, 403);
  t.equal(wrong.json.error.code, 'csrf_failed');
  const listed = await call(gateway.url, '/admin/keys?name=no-csrf', withSession(session, { csrf: false }));
  t.same(listed.json.data, [], 'nothing was made');
  const made = await call(gateway.url, '/admin/keys', withSession(session, { body: { name: 'with-csrf' } }));
  t.equal(made.status, 201);
});

t.test('sign-in refusals: a wrong key, a form post, another site', async (t) => {
  const wrong = await call(origin, '/dashboard/session', { key: null, body: JSON.stringify({ key: 'uc_not_a_key_of_ours' }) });
  t.equal(wrong.status, 401);
  t.equal(wrong.json.error.code, 'invalid_api_key');
  t.notOk(wrong.headers.get('set-cookie'));

  const form = await call(origin, '/dashboard/session', { key: null, body: `key=${GATEWAY_KEY}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  t.equal(form.status, 415, 'a cross-site form cannot send JSON, and sign-in takes nothing else');

  const crossSite = await call(origin, '/dashboard/session', { key: null, body: JSON.stringify({ key: GATEWAY_KEY }), headers: { 'sec-fetch-site': 'cross-site' } });
  t.equal(crossSite.status, 403);
  t.equal(crossSite.json.error.code, 'csrf_failed');
  const foreignOrigin = await call(origin, '/dashboard/session', { key: null, body: JSON.stringify({ key: GATEWAY_KEY }), headers: { origin: 'https://evil.example' } });
  t.equal(foreignOrigin.status, 403);

  const missing = await call(origin, '/dashboard/session', { key: null, body: '{}' });
  t.equal(missing.status, 400);
  t.equal(missing.json.error.param, 'key');
  const notJson = await call(origin, '/dashboard/session', { key: null, body: '{' });
  t.equal(notJson.status, 400);

  const none = await call(origin, '/dashboard/session', { key: null });
  t.equal(none.status, 401);
  t.equal(none.json.error.code, 'session_required');
  const forged = await call(gateway.url, '/admin/keys', { key: null, headers: { cookie: `modelgate_session=${'a'.repeat(43)}` } });
  t.equal(forged.status, 401, 'a made-up session is no session');
});

t.test('a key that is not admin sees its own usage only', async (t) => {
  const key = await newKey({ name: 'app-one' });
  const session = await signIn(key.key);
  t.equal(session.body.admin, false);
  t.equal(session.body.name, 'app-one');
  t.equal(session.body.key_id, key.id);
  const admin = await call(gateway.url, '/admin/keys', withSession(session));
  t.equal(admin.status, 403);
  t.equal(admin.json.error.code, 'admin_required');
  t.equal((await call(gateway.url, '/usage', withSession(session))).status, 200);
});

t.test('sign-out ends the session and clears the cookie; it needs the CSRF token', async (t) => {
  const session = await signIn(GATEWAY_KEY);
  const forged = await call(origin, '/dashboard/session', withSession(session, { method: 'DELETE', csrf: false }));
  t.equal(forged.status, 403, 'another site cannot sign the user out');
  const out = await call(origin, '/dashboard/session', withSession(session, { method: 'DELETE' }));
  t.equal(out.status, 200);
  t.same(out.json, { object: 'dashboard_session', deleted: true });
  t.match(out.headers.get('set-cookie'), /^modelgate_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict/);
  t.equal((await call(gateway.url, '/admin/keys', withSession(session))).status, 401);
  t.equal((await call(origin, '/dashboard/session', withSession(session))).status, 401);
});

t.test('revoking the key ends its sessions; regenerating takes admin rights from the old secret at once', async (t) => {
  const revoked = await newKey({ name: 'to-revoke' });
  const session = await signIn(revoked.key);
  t.equal((await call(gateway.url, '/usage', withSession(session))).status, 200);
  t.equal((await call(gateway.url, `/admin/keys/${revoked.id}`, { method: 'DELETE' })).status, 200);
  const after = await call(gateway.url, '/usage', withSession(session));
  t.equal(after.status, 401);
  t.equal(after.json.error.code, 'invalid_api_key');
  t.equal((await signIn(revoked.key)).body.error.code, 'invalid_api_key', 'nor can it sign in again');

  const admin = await newKey({ name: 'second-admin', admin: true });
  const adminSession = await signIn(admin.key);
  t.equal(adminSession.body.admin, true);
  t.equal((await call(gateway.url, '/admin/keys', withSession(adminSession))).status, 200);
  const regenerated = await call(gateway.url, `/admin/keys/${admin.id}/regenerate`, { body: '{}' });
  t.equal(regenerated.status, 200);
  const demoted = await call(gateway.url, '/admin/keys', withSession(adminSession));
  t.equal(demoted.status, 403, 'a session of the replaced secret no longer administers');
  t.equal((await call(gateway.url, '/usage', withSession(adminSession))).status, 200, 'but serves through the grace period, as that secret does');
  const fresh = await signIn(regenerated.json.key);
  t.equal(fresh.body.admin, true, 'the new secret signs in as admin');
});

t.test('the session is logged by key id, never its token or the key', async (t) => {
  const session = await signIn(GATEWAY_KEY);
  await call(gateway.url, '/admin/keys', withSession(session));
  const text = JSON.stringify(gateway.logs);
  t.notMatch(text, session.cookie.split('=')[1]!);
  t.notMatch(text, GATEWAY_KEY);
  t.notMatch(text, session.csrf);
  t.ok(gateway.logs.some((line) => line.msg === 'dashboard: signed in' && line.keyId === 'bootstrap'));
});
