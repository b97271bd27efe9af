// How long logging a 100 KB request body holds the event loop (issue 17): the main thread masks
// secrets in, anonymizes and serializes the line; the rotating file transport (pino-roll) writes it
// from a worker thread. Logs LINES lines, 5 ms apart, through the logger's hook in one
// block and through logLarge (sliced, as the server logs bodies), with anonymization off and on;
// reports the time of each call and the event loop's delay meanwhile (its max is the longest block).
//   npm run bench:log-body
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Anonymizer } from '../core/anonymize.js';
import { anonymizeLogs, createLogger, linesWritten, logLarge, type LoggingSettings } from '../core/logger.js';

const LINES = Number(process.env.BENCH_LOG_LINES ?? 500);

function body(): Record<string, unknown> {
  // ~100 KB of chat: sentences with an address and a number now and then, as a support log has.
  const sentence = 'The customer asked about the invoice sent to jane.doe@example.com last week, call back on +1 555 123 4567 after five. ';
  const messages = [];
  for (let i = 0; messages.length * 4000 < 100_000; i++) messages.push({ role: i % 2 ? 'assistant' : 'user', content: sentence.repeat(Math.ceil(4000 / sentence.length)) });
  return { model: 'gpt-4o-mini', user: 'customer-1234', messages };
}

async function run(label: string, anonymize: boolean, sliced: boolean | 'idle'): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-logbench-'));
  const settings: LoggingSettings = {
    MODELGATE_LOG_LEVEL: 'info',
    MODELGATE_LOG_REQUESTS: true,
    MODELGATE_LOG_RESPONSES: false,
    MODELGATE_LOG_ERRORS: true,
    MODELGATE_LOG_PERFORMANCE: false,
    MODELGATE_LOG_FILE: join(dir, 'bench.log'),
    MODELGATE_LOG_ROTATION: true,
    MODELGATE_LOG_ROTATION_SIZE: 100,
    MODELGATE_LOG_ROTATION_COUNT: 2,
    MODELGATE_LOG_RETENTION: 90,
  };
  anonymizeLogs(anonymize ? new Anonymizer({ enabled: true, fields: [], key: Buffer.alloc(32, 1) }) : undefined);
  const logger = createLogger(settings);
  const request = body();
  const bytes = JSON.stringify(request).length;
  // Warm up (and let the transport's worker start).
  for (let i = 0; i < 20; i++) logger.info({ requestId: `warm-${i}`, request }, 'request');
  await new Promise((resolve) => setTimeout(resolve, 500));
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const times: number[] = [];
  for (let i = 0; i < LINES; i++) {
    const started = performance.now();
    if (sliced === 'idle') {
      // The same pacing with no line: what the loop delay reads without logging.
    } else if (sliced) logLarge(logger, { requestId: `line-${i}`, request }, 'request');
    else logger.info({ requestId: `line-${i}`, request }, 'request');
    times.push(performance.now() - started);
    // One line at a time, 5 ms apart (a request with a 100 KB body every few ms): the delay
    // measured is each line's own, not a pile of them.
    await linesWritten();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await linesWritten();
  delay.disable();
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(2);
  console.log(
    `${label.padEnd(22)} body ${(bytes / 1024).toFixed(0)} KB  call: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms; loop delay p99 ${(delay.percentile(99) / 1e6).toFixed(2)} ms, max ${(delay.max / 1e6).toFixed(2)} ms`,
  );
  await new Promise<void>((resolve) => logger.flush(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
}

await run('no logging (baseline)', false, 'idle');
await run('in one block, plain', false, false);
await run('in one block, anonymized', true, false);
await run('sliced, plain', false, true);
await run('sliced, anonymized', true, true);
process.exit(0);
