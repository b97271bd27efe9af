// One fuzz case: what to send over one connection (a script for test/fuzz/wire.ts), how many answers
// are due, and what the fakes were told to do. Generated from a case's own PRNG (see prng.ts), so
// a failing case is replayed by its seed and number alone. The kinds, by weight: chat bodies,
// hostile headers, Authorization variants, other routes, connection behaviours, provider failures
// made on purpose, whitespace prompts, and requests Node's HTTP parser itself refuses.
import type { Prng } from './prng.js';
import { chatBody, modelName, type BodyOptions } from './chat-bodies.js';
import { chunked, requestBytes, type Header, type WireStep } from './wire.js';

/** What the fake providers do with the case's request, when it reaches them. */
export interface UpstreamFault {
  what: string;
  /** `{key}` in `body` becomes the fake's own key, as real providers quote part of a wrong key. */
  reply: { status: number; body: string; headers?: Record<string, string> } | 'drop' | 'hang' | 'cut-stream';
}

export interface FuzzCase {
  kind: string;
  what: string;
  steps: WireStep[];
  /** Responses due: complete requests sent on this connection. */
  expect: number;
  heads?: boolean[];
  fault?: UpstreamFault;
  /** The gateway answered before the body was sent in full: it must then close the connection. */
  watchClose?: boolean;
  /** The request must not reach a provider if this prompt's real token count exceeds tokens per minute. */
  mustNotForward?: { prompt: string };
}

export interface CaseOptions extends BodyOptions {
  gatewayKey: string;
  /** Early refusals of a body still being sent (a known defect keeps those connections open). */
  earlyRefusals: boolean;
  /** Upstream failures whose text quotes the provider's key (a known defect passes it through). */
  secretsInUpstreamErrors: boolean;
  /** Prompts of whitespace the estimator does not count (a known defect). */
  whitespacePrompts: boolean;
  /** Tokens per minute the gateway allows: a whitespace prompt is made larger than that. */
  tokensPerMinute: number;
  bodyLimit: number;
}

const X_MODELGATE = [
  'x-modelgate-strategy', 'x-modelgate-max-cost', 'x-modelgate-quality-threshold', 'x-modelgate-response-time-limit', 'x-modelgate-failover',
  'x-modelgate-fallback-providers', 'x-modelgate-fallback-models', 'x-modelgate-failover-retries', 'x-modelgate-retry-attempts',
  'x-modelgate-retry-delay', 'x-modelgate-retry-delay-multiplier', 'x-modelgate-exponential-backoff', 'x-modelgate-cache', 'x-modelgate-unknown',
];

/** Header values Node's parser lets through: printable ASCII, obs-text bytes, lengths up to ~8 KB. */
function headerValue(rng: Prng): string | Buffer {
  switch (rng.int(0, 5)) {
    case 0:
      return rng.pick(['', ' ', '-1', '0', '1e999', 'NaN', 'Infinity', '9007199254740993', '1e9', 'true', 'TRUE', 'bypass', 'refresh', 'quality_optimized', '__proto__']);
    case 1:
      return rng.pick([',,,', 'openai,,anthropic', '__proto__,constructor', 'openai/gpt-4o-mini,auto', '../..', '%00', '{"a":1}', '[1,2]']);
    case 2:
      return 'x'.repeat(rng.size(1, 8000));
    case 3:
      return Buffer.from(Array.from({ length: rng.size(1, 40) }, () => rng.int(0x80, 0xff)));
    case 4:
      return Buffer.from('模型 😀', 'utf8');
    default:
      return `${rng.int(-5, 5)}.${rng.int(0, 99)}`;
  }
}

function authorization(rng: Prng, key: string): { header?: string | Buffer; valid: boolean } {
  const variants: Array<[string | Buffer | undefined, boolean]> = [
    [`Bearer ${key}`, true],
    [`bearer ${key}`, true],
    [`BEARER   ${key}  `, true],
    [undefined, false],
    ['', false],
    ['Bearer', false],
    ['Bearer ', false],
    [`Bearer ${key}x`, false],
    [`Bearer ${key.slice(0, -1)}`, false],
    [`Bearer ${key} ${key}`, false],
    [`Basic ${Buffer.from(`user:${key}`).toString('base64')}`, false],
    [`Token ${key}`, false],
    [key, false],
    [`Bearer ${'A'.repeat(8000)}`, false],
    [`Bearer uc_${'\u00e9'.repeat(20)}`, false],
    [Buffer.concat([Buffer.from('Bearer '), Buffer.from([0xff, 0xfe, 0x80])]), false],
    ['Bearer null', false],
    ['Bearer undefined', false],
    ['Bearer __proto__', false],
  ];
  const [header, valid] = rng.pick(variants);
  return { header, valid };
}

function chatHeaders(body: Buffer, key: string, extra: Header[] = []): Header[] {
  return [['host', '127.0.0.1'], ['authorization', `Bearer ${key}`], ['content-type', 'application/json'], ['content-length', String(body.length)], ...extra];
}

const GOOD_BODY = Buffer.from(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hi' }], max_tokens: 8 }));

/** Invalid UTF-8 spliced into the body's bytes: overlong forms, lone continuation bytes, CESU surrogates, a cut sequence. */
function withInvalidUtf8(rng: Prng, body: Buffer): Buffer {
  const bad = rng.pick([[0xff], [0xc0, 0x80], [0x80], [0xed, 0xa0, 0x80], [0xe6, 0xa8], [0xf4, 0x90, 0x80, 0x80], [0xef, 0xbb, 0xbf]]);
  // Inside a string value where there is one (after a quote), else anywhere.
  const quote = body.indexOf('"content":"');
  const at = quote >= 0 && rng.chance(0.7) ? quote + 11 : rng.int(0, body.length);
  return Buffer.concat([body.subarray(0, at), Buffer.from(bad), body.subarray(at)]);
}

function chatCase(rng: Prng, options: CaseOptions): FuzzCase {
  const generated = chatBody(rng, options);
  let body: Buffer = Buffer.from(generated.text, 'utf8');
  const what = [...generated.what];
  if (rng.chance(0.1)) {
    body = withInvalidUtf8(rng, body);
    what.push('invalid UTF-8 bytes');
  }
  if (rng.chance(0.05)) {
    body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body]);
    what.push('a leading BOM');
  }
  return { kind: 'chat-body', what: what.join('; '), steps: [{ write: requestBytes('POST', '/v1/chat/completions', chatHeaders(body, options.gatewayKey), body) }], expect: 1 };
}

function headerCase(rng: Prng, options: CaseOptions): FuzzCase {
  const body = rng.chance(0.7) ? GOOD_BODY : Buffer.from(chatBody(rng, options).text, 'utf8');
  const extra: Header[] = [];
  const what: string[] = [];
  for (let i = rng.size(1, 4); i > 0; i--) {
    const name = rng.pick([...X_MODELGATE, 'cache-control', 'accept', 'accept-encoding', 'x-request-id', 'x-forwarded-for', 'content-encoding', 'connection', 'user-agent']);
    extra.push([name, headerValue(rng)]);
    what.push(`hostile ${name}`);
  }
  const auth = authorization(rng, options.gatewayKey);
  const headers: Header[] = [['host', '127.0.0.1'], ['content-length', String(body.length)], ...extra];
  if (auth.header !== undefined) headers.push(['authorization', auth.header]);
  what.push(auth.valid ? 'a valid Authorization' : 'an invalid Authorization');
  const contentType = rng.pick(['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=utf-16', '', 'application/json, text/html']);
  if (rng.chance(0.8)) headers.push(['content-type', contentType]);
  return { kind: 'chat-headers', what: what.join('; '), steps: [{ write: requestBytes('POST', '/v1/chat/completions', headers, body) }], expect: 1 };
}

function routeCase(rng: Prng, options: CaseOptions): FuzzCase {
  const id = () =>
    rng.pick([
      encodeURIComponent(modelName(rng, options)).slice(0, 6000), '%zz', '%', '%00', '%2e%2e', '..%2f..%2fetc', 'openai%2Fgpt-4o-mini', 'openai/gpt-4o-mini', '__proto__', 'constructor', 'a'.repeat(6000), '%E6%A8%A1', '%ED%A0%80', '%C0%AF',
    ]);
  const day = () => rng.pick(['2025-01-01', '2025-02-31', '0000-00-00', '9999-12-31', '0001-01-01', '', '2025-1-1', '2025-01-01T00:00:00Z', 'today', '%00', '-1', '2025-01-01%0A', 'x'.repeat(3000), '20250101', '2025-13-01']);
  let path: string;
  switch (rng.int(0, 5)) {
    case 0:
      path = `/v1/models/${id()}`;
      break;
    case 1:
      path = `/v1/usage?${Array.from({ length: rng.size(1, 4) }, () => `${rng.pick(['from', 'to', 'from', 'to', 'tenant', '__proto__'])}=${day()}`).join('&')}`;
      break;
    case 2:
      path = `/v1/providers/${rng.pick(['openai', 'anthropic', 'google', 'cohere', 'custom', '__proto__', 'constructor', 'toString', 'OPENAI', '%zz', '..', 'openai%2F..', 'x'.repeat(5000)])}/test`;
      break;
    case 3:
      path = rng.pick(['/v1/models', '/v1/providers', '/v1/providers/status', '/v1/health', '/v1/openapi.json', '/metrics', '/v1/budget/resume', '/v1/usage']);
      break;
    case 4:
      path = rng.pick(['//v1//chat/completions', '/v1/chat/completions/', '/v1/chat/completions?x=1', '/v1/../v1/models', '/V1/MODELS', '/v1/models/', '/v1/%2e%2e/health', '/v2/chat/completions', '/', '/v1', '/v1/models?' + 'a'.repeat(6000)]);
      break;
    default:
      path = `/v1/models/${id()}/${id()}`;
  }
  const method = rng.pick(['GET', 'GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);
  const auth = authorization(rng, options.gatewayKey);
  const body = method === 'POST' || method === 'PUT' ? GOOD_BODY : undefined;
  const headers: Header[] = [['host', '127.0.0.1']];
  if (auth.header !== undefined) headers.push(['authorization', auth.header]);
  if (body) headers.push(['content-type', 'application/json'], ['content-length', String(body.length)]);
  return { kind: 'route', what: `${method} ${path.slice(0, 200)}; ${auth.valid ? 'valid' : 'invalid'} key`, steps: [{ write: requestBytes(method, path, headers, body) }], expect: 1, heads: [method === 'HEAD'] };
}

function connectionCase(rng: Prng, options: CaseOptions): FuzzCase {
  const key = options.gatewayKey;
  const body = rng.chance(0.6) ? GOOD_BODY : Buffer.from(chatBody(rng, options).text, 'utf8');
  const post = (headers: Header[], payload?: Buffer) => requestBytes('POST', '/v1/chat/completions', headers, payload);
  const base: Header[] = [['host', '127.0.0.1'], ['authorization', `Bearer ${key}`], ['content-type', 'application/json']];
  switch (rng.int(0, 8)) {
    case 0: {
      // Content-Length larger than the body, then the client half-closes: the body never completes,
      // and Node's parser answers the early end itself.
      const declared = body.length + rng.size(1, options.bodyLimit);
      return { kind: 'wire', what: `content-length ${declared} but ${body.length} bytes sent, then half-close`, steps: [{ write: post([...base, ['content-length', String(declared)]], body) }, { end: true }], expect: 0 };
    }
    case 1: {
      const cut = rng.int(0, body.length - 1);
      return { kind: 'wire', what: `body cut at byte ${cut} of ${body.length}, then the connection is destroyed`, steps: [{ write: post([...base, ['content-length', String(body.length)]], body.subarray(0, cut)) }, { pause: rng.int(0, 50) }, { destroy: true }], expect: 0 };
    }
    case 2: {
      const size = rng.size(1, 4096);
      const ext = rng.pick(['', ';foo=bar', ';' + 'x'.repeat(100)]);
      return { kind: 'wire', what: `chunked body in chunks of ${size}${ext ? ' with extensions' : ''}`, steps: [{ write: post([...base, ['transfer-encoding', 'chunked']], chunked(body, size, ext)) }], expect: 1 };
    }
    case 3: {
      // Chunked and then gone: the last chunk never comes.
      const encoded = chunked(body, rng.size(1, 512));
      return { kind: 'wire', what: 'chunked body cut before the last chunk, then destroyed', steps: [{ write: post([...base, ['transfer-encoding', 'chunked']], encoded.subarray(0, encoded.length - 5)) }, { pause: 20 }, { destroy: true }], expect: 0 };
    }
    case 4: {
      const count = rng.int(2, 5);
      const requests = Array.from({ length: count }, () => (rng.chance(0.7) ? post([...base, ['content-length', String(GOOD_BODY.length)]], GOOD_BODY) : requestBytes('GET', '/v1/models', [['host', '127.0.0.1'], ['authorization', `Bearer ${key}`]])));
      return { kind: 'wire', what: `${count} pipelined requests in one write`, steps: [{ write: Buffer.concat(requests) }], expect: count };
    }
    case 5: {
      // A slow client: the body arrives in pieces with pauses.
      const pieces = rng.int(2, 6);
      const step = Math.ceil(body.length / pieces);
      const steps: WireStep[] = [{ write: post([...base, ['content-length', String(body.length)]]) }];
      for (let i = 0; i < body.length; i += step) steps.push({ pause: rng.int(0, 40) }, { write: body.subarray(i, i + step) });
      return { kind: 'wire', what: `body trickled in ${pieces} pieces`, steps, expect: 1 };
    }
    case 6:
      return { kind: 'wire', what: 'Expect: 100-continue', steps: [{ write: post([...base, ['expect', '100-continue'], ['content-length', String(body.length)]]) }, { pause: 30 }, { write: body }], expect: 1 };
    case 7: {
      // Content-Length smaller than the body: the rest is read as the next request, which is junk.
      const declared = rng.int(0, body.length - 1);
      return { kind: 'wire', what: `content-length ${declared} for a ${body.length}-byte body (the rest reads as a second request)`, steps: [{ write: post([...base, ['content-length', String(declared)]], body) }, { pause: 50 }, { end: true }], expect: 1 };
    }
    default: {
      if (!options.earlyRefusals) return connectionCase(rng, options);
      // Refused before the body is read (no key, or a declared size over the limit) while the
      // client is still sending: the gateway must answer and then close, not wait for the rest.
      const overLimit = rng.chance(0.5);
      const headers: Header[] = overLimit ? [...base, ['content-length', String(options.bodyLimit * 4)]] : [['host', '127.0.0.1'], ['content-type', 'application/json'], ['content-length', String(options.bodyLimit)]];
      return {
        kind: 'early-refusal',
        what: overLimit ? `declares ${options.bodyLimit * 4} bytes (over the limit), sends 1 KB and waits` : 'no key, declares a full-size body, sends 1 KB and waits',
        steps: [{ write: post(headers, Buffer.alloc(1024, 0x20)) }],
        expect: 1,
        watchClose: true,
      };
    }
  }
}

/** Requests only Node's parser sees: bad bytes in the request line or headers, conflicting lengths, huge headers. */
function parserCase(rng: Prng, options: CaseOptions): FuzzCase {
  const key = options.gatewayKey;
  const raw = rng.pick([
    `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\n{}{}{}`,
    `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-length: 2\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
    `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: -1\r\n\r\n`,
    `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 1e3\r\n\r\n`,
    `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
    `GET /v1/models HTTP/1.1\r\nhost: x\r\nx-modelgate-strategy: a\u0001b\r\n\r\n`,
    `GET /v1/models HTTP/1.1\r\nhost: x\r\nbad header: 1\r\n\r\n`,
    `GET /v1/models HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`,
    `BREW /v1/models HTTP/1.1\r\nhost: x\r\n\r\n`,
    `GET /v1/models HTTP/9.9\r\nhost: x\r\n\r\n`,
    `GET /v1/mo dels HTTP/1.1\r\nhost: x\r\n\r\n`,
    `GET /v1/models\u0000 HTTP/1.1\r\nhost: x\r\n\r\n`,
  ]);
  return { kind: 'parser', what: `raw request: ${JSON.stringify(raw.slice(0, 160))}`, steps: [{ write: Buffer.from(raw, 'latin1') }, { pause: 30 }, { end: true }], expect: 1 };
}

function faultCase(rng: Prng, options: CaseOptions): FuzzCase {
  const quote = options.secretsInUpstreamErrors;
  const fault = rng.pick<UpstreamFault>([
    { what: 'a 500 quoting the key', reply: { status: 500, body: JSON.stringify({ error: { message: quote ? 'internal error for key {key}' : 'internal error', type: 'server_error' } }) } },
    { what: 'a 401 quoting the key', reply: { status: 401, body: JSON.stringify({ error: { message: quote ? 'Incorrect API key provided: {key}.' : 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } }) } },
    { what: 'a 400 quoting the key', reply: { status: 400, body: JSON.stringify({ error: { message: quote ? 'Bad request from {key}' : 'Bad request', type: 'invalid_request_error' } }) } },
    { what: 'a 429 with a huge Retry-After', reply: { status: 429, body: '{"error":{"message":"slow down"}}', headers: { 'retry-after': '99999999' } } },
    { what: 'a 503 in HTML', reply: { status: 503, body: '<html>upstream down</html>', headers: { 'content-type': 'text/html' } } },
    { what: 'a 200 that is not JSON', reply: { status: 200, body: '{"id":' } },
    { what: 'a 200 of the wrong shape', reply: { status: 200, body: '{"choices":"none","usage":{"prompt_tokens":-5,"completion_tokens":1e999}}' } },
    { what: 'the connection dropped', reply: 'drop' },
    { what: 'no answer', reply: 'hang' },
    { what: 'a stream cut midway', reply: 'cut-stream' },
  ]);
  const stream = rng.chance(0.4);
  const body = Buffer.from(JSON.stringify({ model: rng.pick(['gpt-4o-mini', 'claude-sonnet-4-5', 'auto']), messages: [{ role: 'user', content: 'Say hi' }], max_tokens: 8, stream }));
  return { kind: 'upstream-fault', what: `${fault.what}${stream ? ', streamed' : ''}`, steps: [{ write: requestBytes('POST', '/v1/chat/completions', chatHeaders(body, options.gatewayKey, [['x-modelgate-cache', 'bypass']]), body) }], expect: 1, fault };
}

/** A prompt mostly of whitespace, sized so its real token count exceeds the per-minute allowance. */
function whitespaceCase(rng: Prng, options: CaseOptions): FuzzCase {
  // Each of these costs o200k at least one token per two characters; the test recounts.
  const unit = rng.pick([' \t \n', '\n \t ', ' \n \t', '\t \n ']);
  const text = unit.repeat(Math.floor(Math.min(options.bodyLimit * 0.8, options.tokensPerMinute * 3) / unit.length));
  const body = Buffer.from(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }], max_tokens: 8 }));
  return {
    kind: 'whitespace-prompt',
    what: `a prompt of ${text.length} characters of ${JSON.stringify(unit)}`,
    steps: [{ write: requestBytes('POST', '/v1/chat/completions', chatHeaders(body, options.gatewayKey, [['x-modelgate-cache', 'bypass']]), body) }],
    expect: 1,
    mustNotForward: { prompt: text },
  };
}

/** Case `rng` of a run: a kind drawn by weight, then the case itself. */
export function generateCase(rng: Prng, options: CaseOptions): FuzzCase {
  const roll = rng.next();
  if (roll < 0.4) return chatCase(rng, options);
  if (roll < 0.52) return headerCase(rng, options);
  if (roll < 0.64) return routeCase(rng, options);
  if (roll < 0.8) return connectionCase(rng, options);
  if (roll < 0.9) return faultCase(rng, options);
  if (roll < 0.95 && options.whitespacePrompts) return whitespaceCase(rng, options);
  return parserCase(rng, options);
}
