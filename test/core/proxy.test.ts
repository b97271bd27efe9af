// The Forwarder on its own, against fake upstreams: each attempt owns its upstream request, so one
// that ended while queued for a connection is never sent and never answers a newer attempt on the
// same client request; attempts leave no listeners behind on the client's req/res.
import t from 'tap';
import http from 'node:http';
import { Socket } from 'node:net';
import { AbortedError, Forwarder, readBody } from '../../core/proxy.js';
import { FakeProvider, json, sleep, type Responder } from '../helpers/fake-provider.js';
import type { UpstreamRequest } from '../../core/provider.js';

/** A client request/response pair as the server would hand them to a route. */
function clientPair(): { req: http.IncomingMessage; res: http.ServerResponse } {
  const req = new http.IncomingMessage(new Socket());
  req.method = 'POST';
  req.url = '/v1/chat/completions';
  const res = new http.ServerResponse(req);
  return { req, res };
}

function post(base: string, path: string): UpstreamRequest {
  return { method: 'POST', url: `${base}${path}`, headers: { 'content-type': 'application/json' }, body: '{}' };
}

function gated(responder: Responder): { responder: Responder; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return {
    release,
    responder: async (request, res) => {
      await gate;
      return responder(request, res);
    },
  };
}

async function until(what: () => boolean): Promise<boolean> {
  for (let i = 0; i < 250 && !what(); i++) await sleep(20);
  return what();
}

const never = new AbortController().signal;

t.test('an attempt that ended while queued for a socket is never sent, and never answers the next attempt', async (t) => {
  const a = await FakeProvider.start(json(200, { from: 'a' }));
  const b = await FakeProvider.start(json(200, { from: 'b' }));
  const forwarder = new Forwarder({ maxSockets: 1 });
  t.teardown(async () => {
    forwarder.close();
    await a.close();
    await b.close();
  });

  // Another request holds the one connection to `a`.
  const blocker = gated(json(200, { from: 'a', path: 'blocker' }));
  a.next(blocker.responder);
  const other = clientPair();
  const held = forwarder.send(other.req, other.res, post(a.url, '/blocker'), never);
  t.ok(await until(() => a.requests.length === 1), 'the blocker holds the connection');

  // The client's first attempt queues behind it and times out there.
  const client = clientPair();
  const first = new AbortController();
  const stale = forwarder.send(client.req, client.res, post(a.url, '/stale'), first.signal);
  first.abort();
  await t.rejects(stale, AbortedError, 'the queued attempt ends');

  // Its retry (here: the next provider) is pending when the connection to `a` frees up.
  const answerB = gated(json(200, { from: 'b' }));
  b.next(answerB.responder);
  const retry = forwarder.send(client.req, client.res, post(b.url, '/retry'), never);
  t.ok(await until(() => b.requests.length === 1), 'the retry reached b');
  blocker.release();
  await readBody(await held, 1024);
  // A later request to `a` queues behind anything still queued there: once it is answered, the
  // stale request would have been sent.
  await readBody(await forwarder.send(other.req, other.res, post(a.url, '/later'), never), 1024);
  t.same(a.requests.map((r) => r.url), ['/blocker', '/later'], 'the stale attempt was never sent');

  answerB.release();
  const response = await retry;
  t.same(JSON.parse((await readBody(response, 1024)).toString()), { from: 'b' }, "the retry's answer is b's");
});

t.test('many attempts on one client request leave no listeners behind on it', async (t) => {
  const upstream = await FakeProvider.start(json(500, { error: { message: 'boom' } }));
  const forwarder = new Forwarder();
  t.teardown(async () => {
    forwarder.close();
    await upstream.close();
  });
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  process.on('warning', onWarning);
  t.teardown(() => void process.off('warning', onWarning));

  const { req, res } = clientPair();
  for (let i = 0; i < 15; i++) {
    const response = await forwarder.send(req, res, post(upstream.url, '/v1/chat/completions'), never);
    await readBody(response, 1024);
  }
  t.ok(await until(() => res.listenerCount('close') === 0 && req.listenerCount('error') === 0), 'every attempt removed its listeners');
  await sleep(20); // warnings are emitted on the next tick
  t.same(warnings.filter((w) => w.name === 'MaxListenersExceededWarning'), [], 'no MaxListenersExceededWarning');
});
