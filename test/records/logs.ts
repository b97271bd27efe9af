// A pino logger whose lines a test can read.
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

export function captureLogs(): { logger: Logger; lines(): Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line));
      callback();
    },
  });
  return { logger: pino({ level: 'info' }, destination), lines: () => lines };
}
