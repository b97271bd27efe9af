// The outbox and its dispatcher on both engines: deliveries claimed by several dispatchers at once
// are each made by one; a failed delivery is retried with the same event id after a backoff that
// doubles (a longer Retry-After wins) and is given up after the retries; alerts retry for a day; a
// 410 disables the endpoint and skips its pending deliveries; a claim whose replica died lapses
// and another delivers; replay makes a new delivery of the same event; the sweeper removes old
// finished deliveries; the latest events of some types are read newest first, each once with its
// channels. The shared alert state fires once among concurrent callers.
import t from 'tap';
import { pino } from 'pino';
import { ENGINES, openTestStore } from '../helpers/database.js';
import { Outbox, type Delivery, type NewDelivery } from '../../plugins/events/outbox.js';
import { Endpoints } from '../../plugins/events/endpoints.js';
import { Dispatcher, SkipDelivery, type Sender } from '../../plugins/events/dispatcher.js';
import { afterFailure, ALERT_RETRY_HORIZON_MS } from '../../plugins/events/retry-policy.js';
import { DeliveryError, type Channel } from '../../plugins/events/types.js';
import { AlertStates } from '../../core/alert-states.js';
import { Anonymizer } from '../../core/anonymize.js';
import { FanOut } from '../../plugins/events/fan-out.js';
import { sql } from 'kysely';
import { waitFor } from '../helpers/receivers.js';

const silent = pino({ level: 'silent' });

function delivery(n: number, channel: Channel = 'webhook', endpointId: string | null = 'wh_a'): NewDelivery {
  return { eventId: `msg_${n}`, eventType: 'key.created', channel, endpointId, payload: JSON.stringify({ type: 'key.created', timestamp: new Date().toISOString(), data: { n } }), createdAt: Date.now() };
}

function dispatcher(outbox: Outbox, senders: Partial<Record<Channel, Sender>>, options: { holder?: string; retries?: number; delayMs?: number; gone?: (id: string) => Promise<void> } = {}): Dispatcher {
  return new Dispatcher({
    outbox,
    senders,
    policy: { retries: options.retries ?? 3, delayMs: options.delayMs ?? 20 },
    logger: silent,
    timeoutMs: 1000,
    gone: options.gone ?? (async () => undefined),
    pollMs: 20,
    holder: options.holder,
  });
}

t.test('the retry policy', async (t) => {
  const base = { attempts: 0, created_at: 0, channel: 'webhook' } as Delivery;
  const error = new DeliveryError('HTTP 503');
  t.same(afterFailure(base, error, { retries: 3, delayMs: 1000 }, 0), { retryAt: 1000 }, 'first retry after the delay');
  t.same(afterFailure({ ...base, attempts: 2 }, error, { retries: 3, delayMs: 1000 }, 0), { retryAt: 4000 }, 'doubling');
  t.same(afterFailure({ ...base, attempts: 3 }, error, { retries: 3, delayMs: 1000 }, 0), { giveUp: true }, 'given up after the retries');
  t.same(afterFailure(base, new DeliveryError('HTTP 429', { retryAfterMs: 30_000 }), { retries: 3, delayMs: 1000 }, 0), { retryAt: 30_000 }, 'a longer Retry-After wins');
  t.same(afterFailure(base, new DeliveryError('HTTP 410', { gone: true }), { retries: 3, delayMs: 1000 }, 0), { giveUp: true }, 'gone is final');
  const alert = { ...base, channel: 'email' } as Delivery;
  t.same(afterFailure({ ...alert, attempts: 30 }, error, { retries: 3, delayMs: 1000 }, 1000), { retryAt: 301_000 }, 'alerts outlast the retries, backoff capped at five minutes');
  t.same(afterFailure({ ...alert, attempts: 30 }, error, { retries: 3, delayMs: 1000 }, ALERT_RETRY_HORIZON_MS), { giveUp: true }, 'for a day');
});

for (const engine of ENGINES) {
  t.test(`${engine}: concurrent dispatchers make each delivery once`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const outbox = new Outbox(store);
    await outbox.add(Array.from({ length: 60 }, (_, i) => delivery(i)));
    const made: string[] = [];
    const sender: Sender = async (message) => {
      made.push(String(message.data.n));
      await new Promise((resolve) => setTimeout(resolve, 2));
      return { statusCode: 200, latencyMs: 2 };
    };
    const dispatchers = ['a', 'b', 'c'].map((holder) => dispatcher(outbox, { webhook: sender }, { holder }));
    dispatchers.forEach((d) => d.start());
    t.ok(await waitFor(() => made.length >= 60, 15_000), 'all made');
    await Promise.all(dispatchers.map((d) => d.close()));
    t.equal(made.length, 60, 'none twice');
    t.equal(new Set(made).size, 60);
    t.equal(await outbox.pending(), 0);
    if (engine === 'postgres') t.ok(dispatchers.filter((d) => d.counts.delivered > 0).length >= 2, 'the work was shared');
  });

  t.test(`${engine}: a failed delivery is retried with the same event id, then given up; replay sends it again`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const outbox = new Outbox(store);
    await outbox.add([delivery(1)]);
    const ids: string[] = [];
    const times: number[] = [];
    let answer = 503;
    const sender: Sender = async (_message, row) => {
      ids.push(row.event_id);
      times.push(Date.now());
      if (answer !== 200) throw new DeliveryError(`HTTP ${answer}`, { statusCode: answer, latencyMs: 1 });
      return { statusCode: 200, latencyMs: 1 };
    };
    const d = dispatcher(outbox, { webhook: sender }, { retries: 2, delayMs: 100 });
    d.start();
    t.ok(await waitFor(() => d.counts.failed === 1, 5000), 'given up');
    t.equal(ids.length, 3, 'first attempt and two retries');
    t.same(new Set(ids), new Set(['msg_1']), 'the same event id each time');
    t.ok(times[2]! - times[1]! >= 180, `backoff doubles (${times[1]! - times[0]!} ms, then ${times[2]! - times[1]!} ms)`);
    const [failed] = await outbox.list('wh_a', 10);
    t.equal(failed!.status, 'failed');
    t.equal(failed!.attempts, 3);
    t.equal(failed!.last_status_code, 503);
    const log = (await outbox.attempts([failed!.id])).get(failed!.id)!;
    t.same(
      log.map((a) => [a.ok, a.statusCode]),
      [
        [false, 503],
        [false, 503],
        [false, 503],
      ],
    );

    answer = 200;
    const replay = await outbox.replay(failed!);
    d.wake();
    t.ok(await waitFor(() => d.counts.delivered === 1, 5000), 'the replay is delivered');
    t.equal(ids.at(-1), 'msg_1', 'with the same event id');
    const replayed = await outbox.get(replay.id);
    t.equal(replayed!.status, 'delivered');
    t.equal(replayed!.replay_of, failed!.id);
    await d.close();
  });

  t.test(`${engine}: a 410 disables the endpoint and skips its pending deliveries; a deleted endpoint's delivery is skipped`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const outbox = new Outbox(store);
    const endpoints = new Endpoints(store);
    const gone = await endpoints.create({ url: 'http://receiver.test/a', description: null, eventTypes: ['*'], enabled: true });
    await outbox.add([delivery(1, 'webhook', gone.id)]);
    const sender: Sender = async (_message, row) => {
      const endpoint = await endpoints.get(row.endpoint_id!);
      if (!endpoint?.enabled) throw new SkipDelivery('endpoint disabled');
      throw new DeliveryError('HTTP 410', { statusCode: 410, gone: true });
    };
    const d = dispatcher(outbox, { webhook: sender }, { gone: (id) => endpoints.disable(id, 'gone') });
    d.start();
    t.ok(await waitFor(() => d.counts.failed === 1, 5000));
    await outbox.add([delivery(2, 'webhook', gone.id)]);
    d.wake();
    t.ok(await waitFor(() => d.counts.skipped === 1, 5000), 'a later delivery is skipped');
    await d.close();
    const endpoint = await endpoints.get(gone.id);
    t.equal(endpoint!.enabled, false);
    t.equal(endpoint!.disabledReason, 'gone');
    t.same(endpoints.takers('key.created'), [], 'no longer takes events');
  });

  t.test(`${engine}: a claim whose replica died lapses, and another replica delivers`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const outbox = new Outbox(store);
    await outbox.add([delivery(1)]);
    const claimed = await outbox.claim('dead-replica', 10, 200);
    t.equal(claimed.length, 1);
    t.same(await outbox.claim('other', 10, 200), [], 'held while the claim lasts');
    await new Promise((resolve) => setTimeout(resolve, 250));
    const again = await outbox.claim('other', 10, 200);
    t.equal(again[0]?.id, claimed[0]!.id, 'taken over once it lapsed');
    await outbox.delivered(claimed[0]!, 'dead-replica', { statusCode: 200, latencyMs: 1 });
    t.equal((await outbox.get(claimed[0]!.id))!.status, 'pending', 'a late word from the dead replica changes nothing');
  });

  t.test(`${engine}: a claim is renewed for each attempt, only while it is still the holder's; a stopping replica gives claims back`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const outbox = new Outbox(store);
    await outbox.add([delivery(1), delivery(2)]);
    const [first, second] = await outbox.claim('a', 10, 100);
    t.equal(await outbox.renew(first!, 'a', 60_000), true, 'renewed while held');
    await new Promise((resolve) => setTimeout(resolve, 150));
    t.equal(await outbox.renew(second!, 'a', 60_000), false, 'lapsed: not renewed, not made');
    t.same(
      (await outbox.claim('b', 10, 60_000)).map((d) => d.id),
      [second!.id],
      'another replica takes the lapsed one, not the renewed one',
    );
    await outbox.release([second!.id], 'b');
    t.same(
      (await outbox.claim('c', 10, 60_000)).map((d) => d.id),
      [second!.id],
      'given back: taken at once',
    );
  });

  t.test(`${engine}: a dispatcher stopping mid-batch makes what it started and gives back the rest at once`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const outbox = new Outbox(store);
    await outbox.add(Array.from({ length: 20 }, (_, i) => delivery(i)));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const made: string[] = [];
    const d = dispatcher(outbox, {
      webhook: async (message) => {
        await gate;
        made.push(String(message.data.n));
        return { statusCode: 200, latencyMs: 1 };
      },
    });
    d.start();
    t.ok(await waitFor(() => (d as unknown as { running?: Promise<void> }).running !== undefined, 5000), 'a batch is under way');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const closing = d.close();
    release();
    await closing;
    t.equal(made.length, 8, 'the eight in flight were made');
    const back = await outbox.claim('other', 50, 60_000);
    t.equal(back.length, 12, 'the twelve not started are claimable at once');
  });

  t.test(`${engine}: a database that stops taking deliveries keeps them queued; they reach the outbox once it does`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const outbox = new Outbox(store);
    const endpoints = new Endpoints(store);
    await endpoints.create({ url: 'http://receiver.test/a', description: null, eventTypes: ['*'], enabled: true });
    let written = 0;
    const fanOut = new FanOut({ outbox, endpoints, webhooks: true, alertChannels: new Set(), anonymizer: new Anonymizer({ enabled: false, fields: [], key: Buffer.alloc(32) }), logger: silent, written: () => written++ });
    // The table goes away (as the database would): writes fail for real.
    await sql`alter table event_outbox rename to event_outbox_away`.execute(store.db);
    fanOut.accept({ type: 'key.revoked', data: { key_id: 'key_1', name: null, expires_at: null, by_key_id: null } });
    await fanOut.flush();
    t.equal(fanOut.queued, 1, 'kept in memory');
    t.equal(written, 0);
    await sql`alter table event_outbox_away rename to event_outbox`.execute(store.db);
    await fanOut.close();
    t.equal(fanOut.queued, 0);
    t.equal(written, 1, 'written once the database takes it');
    t.equal(await outbox.pending(), 1);
  });

  t.test(`${engine}: the sweeper removes finished deliveries past retention and keeps pending ones`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const outbox = new Outbox(store);
    await outbox.add([{ ...delivery(1), createdAt: 1000 }, { ...delivery(2), createdAt: 1000 }]);
    const [first] = await outbox.claim('me', 1, 1000, 2000);
    await outbox.delivered(first!, 'me', { statusCode: 200, latencyMs: 1 });
    t.equal(await outbox.sweep(Date.now()), 1, 'the delivered one');
    t.equal(await outbox.pending(), 1, 'the pending one stays');
  });

  t.test(`${engine}: an alert fires once among concurrent callers, resolves once, and not again within the cool-down`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const states = [new AlertStates(store), new AlertStates(store), new AlertStates(store)];
    const fired = await Promise.all(states.map((s) => s.fire('provider.down', 'openai', 60_000, 1_000_000)));
    t.equal(fired.filter(Boolean).length, 1, 'one of three');
    const resolved = await Promise.all(states.map((s) => s.resolve('provider.down', 'openai', 1_000_500)));
    t.same(
      resolved.filter((at) => at !== undefined),
      [1_000_000],
      'one resolution, saying when it fired',
    );
    t.equal(await states[0]!.fire('provider.down', 'openai', 60_000, 1_030_000), false, 'within the cool-down');
    t.equal(await states[0]!.fire('provider.down', 'openai', 60_000, 1_061_000), true, 'after it');
    await states[0]!.fire('key.expiring_soon', 'key_1@1', Number.MAX_SAFE_INTEGER, 1_000);
    await states[0]!.fire('error_rate.high', 'gateway', 0, 2_000_000);
    await states[0]!.resolve('error_rate.high', 'gateway', 2_000_100);
    await states[0]!.sweep(2_000_050, 500_000);
    t.same(await states[0]!.firing('key.expiring_soon'), [], 'a marker long past is forgotten');
    t.same(await states[0]!.firing('provider.down'), ['openai'], 'a recent alert stays');
    t.equal(await states[0]!.fire('error_rate.high', 'gateway', 60_000, 2_000_200), false, 'a resolution newer than the cut stays (its cool-down holds)');
  });
}

for (const engine of ENGINES) {
  t.test(`${engine}: the latest events of some types, newest first, each once with its channels, replays left out`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const outbox = new Outbox(store);
    const event = (id: string, type: string, at: number, to: Array<[Channel, string | null]>): NewDelivery[] =>
      to.map(([channel, endpointId]) => ({ eventId: id, eventType: type, channel, endpointId, payload: JSON.stringify({ type, timestamp: new Date(at).toISOString(), data: {} }), createdAt: at }));
    await outbox.add([
      ...event('msg_old', 'budget.exceeded', 1_000, [['chat', null]]),
      ...event('msg_mid', 'provider.down', 2_000, [['email', null], ['chat', null], ['webhook', 'wh_a']]),
      ...event('msg_key', 'key.created', 3_000, [['webhook', 'wh_a']]),
      // More deliveries than one read takes: the next event is still found after them.
      ...event('msg_wide', 'provider.down', 4_000, Array.from({ length: 520 }, (_, i): [Channel, string] => ['webhook', `wh_${i}`])),
    ]);
    const mid = (await outbox.list('wh_a', 10)).find((d) => d.event_id === 'msg_mid')!;
    await outbox.replay(mid, 5_000);

    const latest = await outbox.latestEvents(['provider.down', 'budget.exceeded'], 2);
    t.same(
      latest.map((e) => [e.eventId, e.eventType, e.createdAt, [...e.channels].sort()]),
      [
        ['msg_wide', 'provider.down', 4_000, ['webhook']],
        ['msg_mid', 'provider.down', 2_000, ['chat', 'email', 'webhook']],
      ],
      'the replay of msg_mid is not a newer event; key.created is not asked for',
    );
    t.same((await outbox.latestEvents(['provider.down', 'budget.exceeded'], 50)).map((e) => e.eventId), ['msg_wide', 'msg_mid', 'msg_old']);
    t.same(await outbox.latestEvents(['error_rate.high'], 50), []);
    t.same(await outbox.latestEvents([], 50), []);
  });
}
