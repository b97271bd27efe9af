// pino, configured from the logging settings: JSON lines to stdout (or a rotated file), keys and
// credentials redacted wherever they appear in a logged object.
import cluster from 'node:cluster';
import { pino, type Logger, type DestinationStream } from 'pino';
import { defineSettings, type SettingsOf } from './settings.js';
import { redactDeep, redactText } from './redact.js';
import type { Anonymizer } from './anonymize.js';
import { transformStrings } from './sliced-text.js';
import { clipStrings } from './string-walk.js';

export { redactText };

export const loggingSettings = defineSettings({
  MODELGATE_LOG_LEVEL: {
    type: 'string',
    enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    default: 'info',
    variants: ['dev'],
    description: 'Lowest level written to the log.',
  },
  MODELGATE_LOG_REQUESTS: {
    type: 'boolean',
    default: false,
    variants: ['dev'],
    description: 'Write one line per request (method, path, status, model, provider, attempts, cost, timings) including the request body.',
  },
  MODELGATE_LOG_RESPONSES: {
    type: 'boolean',
    default: false,
    variants: ['dev'],
    description: 'Write the per-request line with the response body (the assembled text for streams).',
  },
  MODELGATE_LOG_ERRORS: {
    type: 'boolean',
    default: true,
    description: 'Log failed requests, upstream failures and internal errors.',
  },
  MODELGATE_LOG_PERFORMANCE: {
    type: 'boolean',
    default: false,
    description: 'Write the per-request line with its timing breakdown (gateway overhead, upstream time, time to first token).',
  },
  MODELGATE_LOG_FILE: { type: 'string', description: 'Write logs to this file instead of stdout.' },
  MODELGATE_LOG_ROTATION: { type: 'boolean', default: true, description: 'Rotate MODELGATE_LOG_FILE by size.' },
  MODELGATE_LOG_ROTATION_SIZE: { type: 'integer', default: 100, minimum: 1, description: 'Rotate the log file when it reaches this many MB.' },
  MODELGATE_LOG_ROTATION_COUNT: { type: 'integer', default: 5, minimum: 1, description: 'Rotated log files kept besides the one being written (files of earlier runs count too).' },
  MODELGATE_LOG_RETENTION: {
    type: 'integer',
    default: 90,
    minimum: 1,
    maximum: 36500,
    description: 'Days rotated log files are kept: older ones are deleted hourly by each process that writes MODELGATE_LOG_FILE (the file being written never).',
  },
});

export type LoggingSettings = SettingsOf<typeof loggingSettings>;

const SECRET_FIELDS = ['authorization', 'apiKey', 'api_key', 'key', 'password', 'secret', 'token', 'x-api-key', 'x-goog-api-key', 'cookie', 'set-cookie', 'x-csrf-token', 'csrf_token'];
export const REDACT_PATHS = [
  ...SECRET_FIELDS.map((field) => `["${field}"]`),
  ...SECRET_FIELDS.map((field) => `*["${field}"]`),
  ...SECRET_FIELDS.map((field) => `*.*["${field}"]`),
];

/** Set once the app has built it (its key comes from the data-protection settings): every line is anonymized from then on. */
let anonymizer: Anonymizer | undefined;

/**
 * Anonymizes every log line from now on (MODELGATE_ANONYMIZATION_ENABLED): e-mail addresses and
 * phone numbers in any text, named fields however deep (a logged request body's `user`,
 * `metadata.email`). Held for the process like the secrets redact.ts masks: lines are written
 * from everywhere, and each logger would otherwise have to be handed it.
 */
export function anonymizeLogs(instance: Anonymizer | undefined): void {
  anonymizer = instance?.enabled ? instance : undefined;
}

/** An error's message, stack and own fields (a GatewayError's `cause` list, say), masked. */
function redactedError(error: unknown): unknown {
  const serialized = pino.stdSerializers.err(error as Error) as unknown as Record<string, unknown> | null;
  if (typeof serialized !== 'object' || serialized === null) return serialized;
  for (const field of Object.keys(serialized)) serialized[field] = anonymized(redactDeep(serialized[field]));
  return serialized;
}

/** Lines masked and anonymized already (prepareLine): the hook leaves them as they are. */
const prepared = new WeakSet<object>();
/** Lines being prepared, so a shutdown writes them before it flushes. */
const preparing = new Set<Promise<unknown>>();

/** Characters of one string, and of all strings of a line, that a line with bodies keeps. */
const LOGGED_STRING = 256 * 1024;
const LOGGED_LINE = 1024 * 1024;
/** Lines with bodies being prepared at most; past it a line is written without its bodies. */
const PREPARING_MAX = 64;
let leftOut = 0;

/**
 * Writes a line that may carry large bodies (a request line with MODELGATE_LOG_REQUESTS or
 * _RESPONSES): its strings cut to LOGGED_STRING each and LOGGED_LINE in all (marked), then masked
 * and anonymized a slice at a time, yielding to other work (sliced-text.ts), then written — a
 * little later than it is asked for. While PREPARING_MAX lines wait, a line is written at once
 * without its bodies (`bodies: "left out"`): memory stays bounded when the log cannot keep up.
 */
export function logLarge(logger: Logger, line: Record<string, unknown>, message: string): void {
  // A level that writes nothing: none of the work.
  if (!logger.isLevelEnabled('info')) return;
  if (preparing.size >= PREPARING_MAX) {
    const { request: _request, response: _response, ...rest } = line;
    if (leftOut++ % 1000 === 0) logger.warn({ leftOut }, 'log: bodies left out of request lines, the log is behind');
    logger.info({ ...rest, bodies: 'left out' }, message);
    return;
  }
  const clipped = clipStrings(line, { left: LOGGED_LINE, perString: LOGGED_STRING });
  const named = anonymizer?.namedFields(clipped) ?? clipped;
  const treat = anonymizer ? (text: string) => anonymizer!.text(redactText(text)) : redactText;
  const work = transformStrings(named, treat)
    .then((ready) => {
      const object = { ...(ready as Record<string, unknown>) };
      for (const name of LINE_IDS) if (typeof line[name] === 'string') object[name] = redactText(line[name] as string);
      prepared.add(object);
      logger.info(object, message);
    })
    .catch((error: Error) => logger.warn({ err: error.message }, 'a log line could not be prepared'))
    .finally(() => preparing.delete(work));
  preparing.add(work);
}

/** Resolves once every line logLarge was asked for is written (to the logger: flush it after). */
export async function linesWritten(): Promise<void> {
  while (preparing.size > 0) await Promise.all(preparing);
}

/** A line's own identifiers: a client's numeric x-request-id is not a phone number to pseudonymize (it is masked like any text). */
const LINE_IDS = new Set(['requestId', 'keyId', 'route', 'path', 'method', 'clientIp']);
const keptIds = (name: string, depth: number) => depth === 0 && LINE_IDS.has(name);

function anonymized<T>(value: T): T {
  return anonymizer ? (anonymizer.value(value, keptIds) as T) : value;
}

export function createLogger(settings: LoggingSettings, destination?: DestinationStream): Logger {
  const options = {
    level: settings.MODELGATE_LOG_LEVEL,
    // A worker's lines say which (MODELGATE_WORKERS): they share one stdout.
    base: cluster.isWorker ? { service: 'modelgate', worker: cluster.worker!.id } : { service: 'modelgate' },
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
    formatters: { level: (label: string) => ({ level: label }) },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Error messages from upstreams and libraries may quote a credential, and a logged request body
    // may carry one a client pasted: mask them in the message, in every text of the logged object
    // however deep (`detail[].message`, `request.messages[].content`) and in errors. Objects are
    // copied only where something changed; the caller's stay as they were.
    serializers: { err: redactedError },
    hooks: {
      logMethod(this: Logger, args: unknown[], method: (...a: unknown[]) => void) {
        for (let i = 0; i < args.length; i++) {
          const arg = args[i];
          if (typeof arg === 'string') args[i] = anonymized(redactText(arg));
          else if (i === 0 && !(typeof arg === 'object' && arg !== null && prepared.has(arg))) args[i] = anonymized(redactDeep(arg));
        }
        method.apply(this, args);
      },
    },
  };
  if (destination) return pino(options, destination);
  if (!settings.MODELGATE_LOG_FILE) return pino(options);
  if (!settings.MODELGATE_LOG_ROTATION) return pino(options, pino.destination({ dest: settings.MODELGATE_LOG_FILE, mkdir: true }));
  return pino({
    ...options,
    transport: {
      target: 'pino-roll',
      options: {
        file: settings.MODELGATE_LOG_FILE,
        size: `${settings.MODELGATE_LOG_ROTATION_SIZE}m`,
        // Files this process rotated; those of earlier runs are removed by log-retention.ts.
        limit: { count: settings.MODELGATE_LOG_ROTATION_COUNT },
        mkdir: true,
      },
    },
  });
}
