// Chat alerts: the Slack-compatible payload (shape, limits, escaping) and the channel against a
// real local HTTP receiver — pacing per URL, 2xx accepted, 429/503 carrying Retry-After, and
// errors that never show the webhook URL (its path is the secret).
import t, { type Test } from 'tap';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChatChannel, chatPayload, type PostJson } from '../../plugins/events/chat.js';
import { pacedUrlCount } from '../../plugins/events/chat-pace.js';
import { DeliveryError, type EventMessage } from '../../plugins/events/types.js';

const SECRET_PATH = '/services/T000/B000/XXXXsecretXXXX';

/** The poster http-post.ts will provide, reduced to what a test needs: fetch, status, Retry-After. */
const post: PostJson = async (url, body, options) => {
  const started = performance.now();
  const response = await fetch(url, { method: 'POST', body, headers: options.headers, signal: AbortSignal.timeout(options.timeoutMs) });
  await response.arrayBuffer();
  const retryAfter = Number(response.headers.get('retry-after'));
  return {
    statusCode: response.status,
    latencyMs: Math.round(performance.now() - started),
    ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
  };
};

interface Hit {
  path: string;
  at: number;
  contentType: string | undefined;
  body: unknown;
}

async function receiver(t: Test, answer: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end('ok')) {
  const hits: Hit[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      hits.push({ path: req.url ?? '', at: Date.now(), contentType: req.headers['content-type'], body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      answer(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

const event = (type: string, data: Record<string, unknown>): EventMessage => ({ type, timestamp: '2026-11-25T14:00:00.000Z', data });
const down = event('provider.down', { provider: 'openai', failures: 5, window_seconds: 300, last_error: 'HTTP 503' });

type Block = { type: string; text?: { type: string; text: string }; fields?: Array<{ type: string; text: string }>; elements?: Array<{ type: string; text: string }> };
const blocksOf = (payload: ReturnType<typeof chatPayload>) => payload.blocks as Block[];

t.test('a payload has fallback text, header, summary, fact fields and a context line', async (t) => {
  const payload = chatPayload(down, '#alerts', 'modelgate');
  t.equal(payload.channel, '#alerts');
  t.equal(payload.username, 'modelgate');
  t.equal(payload.text, 'Provider openai is down: 5 requests to openai failed within the last 5 minutes.');
  const blocks = blocksOf(payload);
  t.same(
    blocks.map((b) => b.type),
    ['header', 'section', 'section', 'context'],
  );
  t.same(blocks[0]!.text, { type: 'plain_text', text: 'Provider openai is down', emoji: false });
  t.same(blocks[1]!.text, { type: 'mrkdwn', text: '5 requests to openai failed within the last 5 minutes.' });
  t.same(blocks[2]!.fields![0], { type: 'mrkdwn', text: '*Provider*\nopenai' });
  t.equal(blocks[2]!.fields!.length, 4);
  t.match(blocks[3]!.elements![0]!.text, /^Requests fail over to other providers/);
  t.equal(blocks[3]!.elements![1]!.text, 'provider.down · 2026-11-25T14:00:00.000Z');
});

t.test('budget and key payloads carry their facts', async (t) => {
  const budget = chatPayload(
    event('budget.threshold_reached', { scope: 'key', key_id: 'k_1', period: 'day', period_key: '2026-11-25', threshold: 0.8, action: 'chat', spent_usd: 8, limit_usd: 10, used_ratio: 0.8, resets_at: '2026-11-26T00:00:00Z' }),
    '#budget',
    'gw',
  );
  t.equal(blocksOf(budget)[0]!.text!.text, 'Daily budget of key k_1 at 80%: $8.00 of $10.00 spent');
  t.ok(blocksOf(budget)[2]!.fields!.some((f) => f.text === '*Spent*\n$8.00'));
  const expiring = chatPayload(event('key.expiring_soon', { key_id: 'k_2', name: null, expires_at: '2026-11-28T00:00:00Z', days_left: 3 }), '#keys', 'gw');
  t.equal(expiring.text, 'API key k_2 expires in 3 days: API key k_2 expires at 2026-11-28T00:00:00Z.');
});

t.test('&, < and > in data are escaped in mrkdwn, so a name cannot mention @channel or link', async (t) => {
  const payload = chatPayload(event('key.created', { key_id: 'k_1', name: '<!channel> & <http://evil.test|click>', expires_at: null, by_key_id: null }), '#a', 'gw');
  const serialized = JSON.stringify(payload.blocks.slice(1)) + payload.text;
  t.notMatch(serialized, '<!channel>');
  t.notMatch(serialized, '<http');
  t.match(payload.text, '&lt;!channel&gt; &amp; &lt;http://evil.test|click&gt;');
  t.ok(blocksOf(payload)[2]!.fields!.some((f) => f.text === '*Name*\n&lt;!channel&gt; &amp; &lt;http://evil.test|click&gt;'));
  t.equal(blocksOf(payload)[0]!.text!.text, 'API key created: <!channel> & <http://evil.test|click> (k_1)', 'plain_text header is shown literally, not parsed');
});

t.test("Slack's limits hold: header ≤ 150, at most 10 fields, each ≤ 2000 characters", async (t) => {
  const data: Record<string, unknown> = { long: 'x'.repeat(5000), ampersands: '&'.repeat(3000) };
  for (let i = 0; i < 15; i++) data[`field_${i}`] = i;
  const payload = chatPayload(event(`custom.${'y'.repeat(300)}`, data), '#a', 'gw');
  const blocks = blocksOf(payload);
  t.equal(Array.from(blocks[0]!.text!.text).length, 150);
  t.ok(blocks[0]!.text!.text.endsWith('…'));
  const fields = blocks[2]!.fields!;
  t.equal(fields.length, 10);
  t.match(fields[9]!.text, /^\*More\*\nfield_7: 7\n/, 'facts beyond nine are gathered in the tenth field');
  for (const field of fields) t.ok(field.text.length <= 2000, `${field.text.slice(0, 20)} fits`);
  t.match(fields[1]!.text, /(&amp;)+…$/, 'escaping never leaves half an entity');
  t.ok(payload.text.length <= 3000);
  t.ok(blocks[3]!.elements!.every((e) => e.text.length <= 2000));
});

t.test('a data-less event still makes a valid payload with no empty fields section', async (t) => {
  const blocks = blocksOf(chatPayload(event('custom.ping', {}), '#a', 'gw'));
  t.same(
    blocks.map((b) => b.type),
    ['header', 'section', 'context'],
  );
});

t.test('the channel posts the payload as JSON and resolves on 2xx', async (t) => {
  const chat = await receiver(t);
  const channel = new ChatChannel({ url: `${chat.base}${SECRET_PATH}/ok`, channel: '#alerts', username: 'modelgate', timeoutMs: 2000, post });
  const result = await channel.send(down);
  t.equal(result.statusCode, 200);
  t.equal(chat.hits.length, 1);
  t.equal(chat.hits[0]!.contentType, 'application/json');
  t.same(chat.hits[0]!.body, chatPayload(down, '#alerts', 'modelgate'));
});

t.test('sends to one URL are paced and kept in order; another URL is not held up', async (t) => {
  const chat = await receiver(t);
  const url = `${chat.base}${SECRET_PATH}/paced`;
  const postedAt: number[] = [];
  const timed: PostJson = (target, body, options) => {
    postedAt.push(Date.now());
    return post(target, body, options);
  };
  const channel = new ChatChannel({ url, channel: '#a', username: 'gw', timeoutMs: 2000, post: timed, minIntervalMs: 200 });
  const other = new ChatChannel({ url: `${chat.base}/other`, channel: '#a', username: 'gw', timeoutMs: 2000, post, minIntervalMs: 200 });
  const started = Date.now();
  const messages = [1, 2, 3].map((n) => event('custom.n', { n }));
  await Promise.all([...messages.map((m) => channel.send(m)), other.send(down)]);
  const paced = chat.hits.filter((h) => h.path.endsWith('/paced'));
  t.same(
    paced.map((h) => (h.body as { text: string }).text),
    ['Event custom.n: modelgate reported an event of type custom.n.', 'Event custom.n: modelgate reported an event of type custom.n.', 'Event custom.n: modelgate reported an event of type custom.n.'],
  );
  t.same(
    paced.map((h) => ((h.body as { blocks: Block[] }).blocks[2]!.fields![0]!.text)),
    ['*n*\n1', '*n*\n2', '*n*\n3'],
    'in the order they were sent',
  );
  // measured where the channel hands over to the poster: arrival times also carry connection setup
  t.ok(postedAt[1]! - postedAt[0]! >= 195 && postedAt[2]! - postedAt[1]! >= 195, `posts at least the interval apart (${postedAt.map((at) => at - started).join(', ')} ms)`);
  t.ok(Date.now() - started >= 390, 'three sends take two intervals');
  const otherHit = chat.hits.find((h) => h.path === '/other')!;
  t.ok(otherHit.at - started < 150, 'the other URL went out at once');
});

t.test('429 and 503 fail with their Retry-After; the message never holds the URL', async (t) => {
  let status = 429;
  const chat = await receiver(t, (_req, res) => {
    res.writeHead(status, { 'retry-after': '7' }).end('rate_limited');
  });
  const url = `${chat.base}${SECRET_PATH}/limited`;
  const channel = new ChatChannel({ url, channel: '#a', username: 'gw', timeoutMs: 2000, post, minIntervalMs: 0 });
  const limited = (await channel.send(down).catch((e: unknown) => e)) as DeliveryError;
  t.ok(limited instanceof DeliveryError);
  t.equal(limited.message, 'chat webhook answered HTTP 429');
  t.equal(limited.statusCode, 429);
  t.equal(limited.retryAfterMs, 7000);
  t.notMatch(limited.message, 'secret');
  t.notMatch(limited.message, '127.0.0.1');

  status = 503;
  t.match(await channel.send(down).catch((e: unknown) => e), { message: 'chat webhook answered HTTP 503', retryAfterMs: 7000 });
  status = 500;
  t.match(await channel.send(down).catch((e: unknown) => e), { message: 'chat webhook answered HTTP 500', retryAfterMs: undefined, gone: false });
  status = 410;
  t.match(await channel.send(down).catch((e: unknown) => e), { message: 'chat webhook answered HTTP 410', gone: true });
});

t.test('a poster that throws with the URL in its message becomes a DeliveryError without it', async (t) => {
  const url = `https://hooks.example.test${SECRET_PATH}/throws`;
  const leaky: PostJson = async (target) => {
    throw Object.assign(new Error(`connect ECONNREFUSED ${target}`), { code: 'ECONNREFUSED' });
  };
  const error = (await new ChatChannel({ url, channel: '#a', username: 'gw', timeoutMs: 100, post: leaky, minIntervalMs: 0 }).send(down).catch((e: unknown) => e)) as DeliveryError;
  t.ok(error instanceof DeliveryError);
  t.equal(error.message, 'chat webhook request failed (ECONNREFUSED)');
  const own = new DeliveryError('chat webhook timed out', { latencyMs: 100 });
  const passthrough: PostJson = async () => {
    throw own;
  };
  t.equal(await new ChatChannel({ url, channel: '#a', username: 'gw', timeoutMs: 100, post: passthrough }).send(down).catch((e: unknown) => e), own, "the poster's own DeliveryError passes unchanged");
});

t.test('the pacing table stays bounded across many URLs whose interval has passed', async (t) => {
  const instant: PostJson = async () => ({ statusCode: 200, latencyMs: 0 });
  for (let i = 0; i < 400; i++) {
    await new ChatChannel({ url: `https://hooks.example.test/bound/${i}`, channel: '#a', username: 'gw', timeoutMs: 100, post: instant, minIntervalMs: 0 }).send(down);
  }
  t.ok(pacedUrlCount() <= 256, `${pacedUrlCount()} URLs remembered`);
});

t.test('a URL still inside its interval is not forgotten, so a full table never lets a message out early', async (t) => {
  const instant: PostJson = async () => ({ statusCode: 200, latencyMs: 0 });
  const url = 'https://hooks.example.test/remembered';
  const channel = new ChatChannel({ url, channel: '#a', username: 'gw', timeoutMs: 100, post: instant, minIntervalMs: 300 });
  await channel.send(down);
  for (let i = 0; i < 300; i++) {
    await new ChatChannel({ url: `https://hooks.example.test/churn/${i}`, channel: '#a', username: 'gw', timeoutMs: 100, post: instant, minIntervalMs: 0 }).send(down);
  }
  const started = Date.now();
  await channel.send(down);
  t.ok(Date.now() - started >= 100, 'the second send still waited for its slot');
});
