// pino, configured from the logging settings: JSON lines to stdout (or a rotated file), keys and
// credentials redacted wherever they appear in a logged object.
import cluster from 'node:cluster';
import { pino, type Logger, type DestinationStream } from 'pino';
import { defineSettings, type SettingsOf } from './settings.js';
import { redactDeep, redactText } from './redact.js';

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

const SECRET_FIELDS = ['authorization', 'apiKey', 'api_key', 'key', 'password', 'secret', 'token', 'x-api-key', 'x-goog-api-key', 'cookie', 'set-cookie'];
export const REDACT_PATHS = [
  ...SECRET_FIELDS.map((field) => `["${field}"]`),
  ...SECRET_FIELDS.map((field) => `*["${field}"]`),
  ...SECRET_FIELDS.map((field) => `*.*["${field}"]`),
];

/** An error's message, stack and own fields (a GatewayError's `cause` list, say), masked. */
function redactedError(error: unknown): unknown {
  const serialized = pino.stdSerializers.err(error as Error) as unknown as Record<string, unknown> | null;
  if (typeof serialized !== 'object' || serialized === null) return serialized;
  for (const field of Object.keys(serialized)) serialized[field] = redactDeep(serialized[field]);
  return serialized;
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
          if (typeof arg === 'string') args[i] = redactText(arg);
          else if (i === 0) args[i] = redactDeep(arg);
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
