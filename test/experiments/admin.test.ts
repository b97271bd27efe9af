// The admin API of experiments refuses what it cannot run, with the status and the field: bodies
// out of schema, arms that name no model, a second experiment of one name, changes a running
// experiment cannot take, keys that are not admin keys, ids of nothing; with A/B testing off,
// drafts only. Drafts change freely and start with a PATCH; lists page with a cursor.
import t from 'tap';
import { call, startGateway, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { keyStore } from '../helpers/keys.js';
import { checkError } from '../helpers/schema.js';

const USER_KEY = 'uc_not_an_admin_0123456789ab';
const upstream = await startFakeOpenAI();
t.teardown(() => upstream.close());

const base = { OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_AB_TESTING_ENABLED: 'true' };
const VALID = { name: 'valid', match: { model: 'gpt-4o-mini' }, arms: [{ name: 'a', model: 'gpt-4o-mini' }, { name: 'b', model: 'openai/gpt-4o' }] };

let gateway: TestGateway;
t.before(async () => {
  gateway = await startGateway(base, { keyStores: [keyStore({ [USER_KEY]: {} })] });
});
t.teardown(() => gateway?.close());

const send = (path: string, body?: unknown, method?: string, key?: string) =>
  call(gateway.url, `/admin/experiments${path}`, { method: method ?? (body === undefined ? 'GET' : 'POST'), body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body), key });

t.test('bodies out of schema or bounds are 400 naming the field', async (t) => {
  const cases: Array<[unknown, string | null]> = [
    ['{', null],
    [{ ...VALID, name: 'bad name!' }, 'name'],
    [{ ...VALID, arms: [VALID.arms[0]] }, 'arms'],
    [{ ...VALID, arms: Array.from({ length: 11 }, (_, i) => ({ name: `a${i}`, model: 'gpt-4o-mini' })) }, 'arms'],
    [{ ...VALID, arms: [{ name: 'a', model: 'gpt-4o-mini' }, { name: 'A', model: 'gpt-4o' }] }, 'arms.1.name'],
    [{ ...VALID, arms: [{ name: 'a', model: 'gpt-4o-mini' }, { name: 'b' }] }, 'arms.1'],
    [{ ...VALID, arms: [{ name: 'a', model: 'gpt-4o-mini' }, { name: 'b', model: 'no-such-model' }] }, 'arms.1.model'],
    [{ ...VALID, arms: [{ name: 'a', model: 'gpt-4o-mini', weight: 0 }, { name: 'b', model: 'gpt-4o' }] }, 'arms.0.weight'],
    [{ ...VALID, arms: [{ name: 'a', model: 'gpt-4o-mini', weight: -1 }, { name: 'b', model: 'gpt-4o' }] }, 'arms.0.weight'],
    [{ ...VALID, arms: [{ name: 'a', model: 'gpt-4o-mini' }, { name: 'b', strategy: 'fastest' }] }, 'arms.1.strategy'],
    [{ ...VALID, unit: 'session' }, 'unit'],
    [{ ...VALID, unit: 'header:bad header' }, 'unit'],
    [{ ...VALID, metrics: ['Cost!'] }, 'metrics.0'],
    [{ ...VALID, metrics: ['latency'] }, 'metrics.0'],
    [{ ...VALID, metrics: ['cost'], primary_metric: 'quality_score' }, 'primary_metric'],
    [{ ...VALID, guardrails: ['error_rate', 'error_rate'] }, 'guardrails.1'],
    [{ ...VALID, guardrails: [{ metric: 'uptime' }] }, 'guardrails.0'],
    [{ ...VALID, match: { percent: 0 } }, 'match.percent'],
    [{ ...VALID, match: { keys: [] } }, 'match.keys'],
    [{ ...VALID, duration_days: 400 }, 'duration_days'],
    [{ ...VALID, alpha: 0.5 }, 'alpha'],
    [{ ...VALID, surprise: 1 }, 'surprise'],
  ];
  for (const [body, param] of cases) {
    const refused = await send('', body);
    t.equal(refused.status, 400, JSON.stringify(body).slice(0, 120));
    t.equal(checkError(refused.json), null, 'an OpenAI-shaped error');
    if (param !== null) t.equal(refused.json.error.param, param);
  }
  t.equal((await send('', 'x'.repeat(40_000))).status, 413, 'a body over 32 KB');
});

t.test('only admin keys; ids of nothing are 404', async (t) => {
  t.equal((await send('', VALID, 'POST', USER_KEY)).json.error?.code, 'admin_required');
  t.equal((await send('', undefined, 'GET', USER_KEY)).status, 403);
  t.match(await send(`/exp_${'0'.repeat(24)}`), { status: 404, json: { error: { code: 'experiment_not_found', param: 'id' } } });
  t.equal((await send('/not-an-id')).status, 404);
  t.equal((await send(`/exp_${'0'.repeat(24)}/stop`, {})).status, 404);
  t.equal((await send(`/exp_${'0'.repeat(24)}`, undefined, 'DELETE')).status, 404);
});

t.test('a draft changes and starts; a running experiment keeps its arms; names are unique', async (t) => {
  const draft = await send('', { ...VALID, name: 'draft-1', status: 'draft' });
  t.equal(draft.status, 201);
  t.match(draft.json, { status: 'draft', started_at: null, ends_at: null });
  t.equal((await send('', { ...VALID, name: 'draft-1' })).json.error?.code, 'experiment_exists');
  t.equal((await send(`/${draft.json.id}/promote`, { arm: 'a' })).json.error?.code, 'experiment_not_started');
  const changed = await send(`/${draft.json.id}`, { arms: [{ name: 'a', model: 'gpt-4o-mini', weight: 3 }, { name: 'b', model: 'gpt-4o' }], duration_days: 2 }, 'PATCH');
  t.equal(changed.status, 200);
  t.equal(changed.json.arms[0].weight, 3);
  const started = await send(`/${draft.json.id}`, { status: 'running' }, 'PATCH');
  t.match(started.json, { status: 'running', duration_days: 2 });
  t.equal(Date.parse(started.json.ends_at) - Date.parse(started.json.started_at), 2 * 86_400_000);
  const frozen = await send(`/${draft.json.id}`, { arms: VALID.arms }, 'PATCH');
  t.match(frozen, { status: 409, json: { error: { code: 'experiment_running', param: 'arms' } } });
  const extended = await send(`/${draft.json.id}`, { duration_days: 3, description: 'longer' }, 'PATCH');
  t.match(extended.json, { status: 'running', duration_days: 3, description: 'longer' });
  t.equal((await send(`/${draft.json.id}`, undefined, 'DELETE')).json.error?.code, 'experiment_running', 'stop before delete');
  t.equal((await send(`/${draft.json.id}/promote`, {})).json.error?.code, 'no_winner', 'no data, no winner to promote by default');
  t.equal((await send(`/${draft.json.id}/promote`, { arm: 'zzz' })).json.error?.param, 'arm');
  const stopped = await send(`/${draft.json.id}/stop`, {});
  t.match(stopped.json, { status: 'stopped', finish_reason: 'stopped' });
  t.equal((await send(`/${draft.json.id}/stop`, {})).json.error?.code, 'experiment_not_running');
  t.equal((await send(`/${draft.json.id}`, { description: 'x' }, 'PATCH')).json.error?.code, 'experiment_ended');
  t.equal((await send(`/${draft.json.id}`, undefined, 'DELETE')).status, 200);
  t.equal((await send(`/${draft.json.id}`)).status, 404);
});

t.test('lists page newest first with a cursor, and filter by status', async (t) => {
  for (let i = 0; i < 3; i++) t.equal((await send('', { ...VALID, name: `listed-${i}`, status: 'draft' })).status, 201);
  const first = await send('?limit=2&status=draft');
  t.equal(first.json.data.length, 2);
  t.equal(first.json.has_more, true);
  t.same(first.json.data.map((e: { name: string }) => e.name), ['listed-2', 'listed-1']);
  const next = await send(`?limit=2&status=draft&after=${first.json.last_id}`);
  t.equal(next.json.data[0].name, 'listed-0');
  t.equal((await send('?status=paused')).status, 400);
  t.equal((await send('?after=exp_nope')).status, 400);
});

t.test('with A/B testing off, experiments can be drafted but not started, and nothing is assigned', async (t) => {
  const off = await startGateway({ ...base, MODELGATE_AB_TESTING_ENABLED: 'false' });
  t.teardown(() => off.close());
  const refused = await call(off.url, '/admin/experiments', { body: JSON.stringify(VALID) });
  t.match(refused, { status: 409, json: { error: { code: 'ab_testing_disabled' } } });
  const draft = await call(off.url, '/admin/experiments', { body: JSON.stringify({ ...VALID, status: 'draft' }) });
  t.equal(draft.status, 201);
  t.equal((await call(off.url, `/admin/experiments/${draft.json.id}`, { method: 'PATCH', body: JSON.stringify({ status: 'running' }) })).json.error?.code, 'ab_testing_disabled');
  const answer = await call(off.url, '/chat/completions', { body: JSON.stringify({ model: 'gpt-4o-mini', user: 'u', messages: [{ role: 'user', content: 'Hi' }] }) });
  t.equal(answer.headers.get('x-modelgate-experiment'), null);
});
