// pino, configured from the logging settings: JSON lines to stdout (or a rotated file), keys and
// credentials redacted wherever they appear in a logged object.
import { pino, type Logger, type DestinationStream } from 'pino';
import { defineSettings, type SettingsOf } from './settings.js';

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
  MODELGATE_LOG_ROTATION_COUNT: { type: 'integer', default: 5, minimum: 1, description: 'Rotated log files kept.' },
});

export type LoggingSettings = SettingsOf<typeof loggingSettings>;

const SECRET_FIELDS = ['authorization', 'apiKey', 'api_key', 'key', 'password', 'secret', 'token', 'x-api-key', 'x-goog-api-key', 'cookie', 'set-cookie'];
export const REDACT_PATHS = [
  ...SECRET_FIELDS.map((field) => `["${field}"]`),
  ...SECRET_FIELDS.map((field) => `*["${field}"]`),
  ...SECRET_FIELDS.map((field) => `*.*["${field}"]`),
];

/** Masks key-shaped strings (ours and providers') inside free text such as error messages. */
export function redactText(text: string): string {
  return text.replace(/\b(uc_|sk-|sk_|AIza)[A-Za-z0-9_\-]{4,}/g, '$1[REDACTED]');
}

export function createLogger(settings: LoggingSettings, destination?: DestinationStream): Logger {
  const options = {
    level: settings.MODELGATE_LOG_LEVEL,
    base: { service: 'modelgate' },
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
    formatters: { level: (label: string) => ({ level: label }) },
    timestamp: pino.stdTimeFunctions.isoTime,
    hooks: {
      // Error messages from upstreams and libraries may quote a credential; mask it.
      logMethod(this: Logger, args: unknown[], method: (...a: unknown[]) => void) {
        for (let i = 0; i < args.length; i++) {
          if (typeof args[i] === 'string') args[i] = redactText(args[i] as string);
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
        limit: { count: settings.MODELGATE_LOG_ROTATION_COUNT },
        mkdir: true,
      },
    },
  });
}
