// The benchmark's fake upstream: an OpenAI-compatible endpoint that answers instantly with a
// ~650-byte completion, or an SSE stream (role chunk, 20 content chunks, finish, usage, [DONE]) —
// all at once, or paced like a model generating tokens when the request says `paced <seed>`
// (bench/paced.ts). Prints its port on stdout.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CONTENT_CHUNKS, PACED, schedule } from './paced.js';

const completion = JSON.stringify({
  id: 'chatcmpl-bench000000000000000000000000',
  object: 'chat.completion',
  created: 1741570283,
  model: 'gpt-4o-mini-2024-07-18',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: 'The capital of France is Paris. It has been the country\u2019s capital for most of its history and is its largest city.',
        refusal: null,
        annotations: [],
      },
      logprobs: null,
      finish_reason: 'stop',
    },
  ],
  usage: {
    prompt_tokens: 24,
    completion_tokens: 28,
    total_tokens: 52,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  },
  service_tier: 'default',
  system_fingerprint: 'fp_44709d6fcb',
});

const chunk = (delta: unknown, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1741570283, model: 'gpt-4o-mini-2024-07-18', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null })}\n\n`;
const words = 'The capital of France is Paris, its largest city and the seat of its government for most of its long history.'
  .split(/(?= )/)
  .slice(0, CONTENT_CHUNKS);
const role = chunk({ role: 'assistant', content: '' });
const contents = words.map((word) => chunk({ content: word }));
const ending =
  chunk({}, 'stop') +
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1741570283, model: 'gpt-4o-mini-2024-07-18', choices: [], usage: { prompt_tokens: 24, completion_tokens: CONTENT_CHUNKS, total_tokens: 24 + CONTENT_CHUNKS } })}\n\n` +
  'data: [DONE]\n\n';
const stream = role + contents.join('') + ending;

/** Sends by the schedule: each content chunk in a write of its own, on a timer. */
function paced(res: http.ServerResponse, seed: number): void {
  const { firstMs, gapsMs } = schedule(seed);
  res.write(role);
  let sent = 0;
  const next = () => {
    res.write(contents[sent]!);
    sent++;
    if (sent < contents.length) setTimeout(next, gapsMs[sent - 1]);
    else res.end(ending);
  };
  setTimeout(next, firstMs);
}

const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  const body: Buffer[] = [];
  req.on('data', (data: Buffer) => body.push(data));
  req.on('end', () => {
    const text = Buffer.concat(body).toString();
    if (text.includes('"stream":true')) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const pacing = PACED.exec(text);
      if (pacing) return paced(res, Number(pacing[1]));
      // Sent in pieces, as a provider would, so the gateway parses a real stream.
      const parts = stream.split('\n\n').filter(Boolean);
      for (const part of parts) res.write(`${part}\n\n`);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(completion) });
    res.end(completion);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0));
