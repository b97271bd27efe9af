// Sends an alert as one e-mail over SMTP (nodemailer): implicit TLS on port 465, otherwise STARTTLS
// whenever offered and required only when requireTls. A retried delivery keeps its Message-ID, so
// mail clients show it as the same message; a failure's text is built from SMTP codes, never from
// the server's reply, because a server may echo the username or password back.
import nodemailer from 'nodemailer';
import type { Transporter } from 'nodemailer';
import { describeEvent } from './alert-text.js';
import { htmlBody, plainBody } from './email-body.js';
import { DeliveryError, type AttemptResult, type EventMessage } from './types.js';

export interface EmailOptions {
  host: string;
  port: number;
  username?: string;
  password?: string;
  /** Refuse to send unless the server upgrades the connection with STARTTLS. */
  requireTls: boolean;
  sender: string;
  recipients: string[];
  /** Bounds connecting, the greeting and every wait on the socket. */
  timeoutMs: number;
  /** The subject's prefix; default 'modelgate'. */
  serviceName?: string;
}

interface SmtpFailure {
  code?: string;
  originalCode?: string;
  responseCode?: number;
}

/** A stable Message-ID from the delivery's id; characters not allowed in one are dropped. */
export function messageIdHeader(messageId: string): string {
  return `<${messageId.replace(/[^A-Za-z0-9._-]/g, '') || 'alert'}@modelgate>`;
}

/** What went wrong, from codes only: "SMTP connection refused", "SMTP 535 authentication failed". */
export function smtpFailureText(error: SmtpFailure): string {
  const status = error.responseCode ? ` ${error.responseCode}` : '';
  switch (error.code) {
    case 'EAUTH':
    case 'ENOAUTH':
      return `SMTP${status} authentication failed`;
    case 'ETIMEDOUT':
      return 'SMTP connection timed out';
    case 'EDNS':
      return 'SMTP server name did not resolve';
    case 'ETLS':
      return `SMTP${status} TLS could not be started`;
    case 'EENVELOPE':
      return `SMTP${status} sender or recipients refused`;
    case 'EMESSAGE':
      return `SMTP${status} message refused`;
    case 'ECONNECTION':
    case 'ESOCKET':
      if (error.originalCode === 'ECONNREFUSED') return 'SMTP connection refused';
      if (error.originalCode === 'ECONNRESET') return 'SMTP connection reset';
      if (error.originalCode && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|ERR_SSL/.test(error.originalCode)) {
        return `SMTP TLS certificate not trusted (${error.originalCode.replace(/[^A-Z0-9_]/g, '')})`;
      }
      return `SMTP${status} connection failed${error.originalCode && /^[A-Z_]+$/.test(error.originalCode) ? ` (${error.originalCode})` : ''}`;
    default:
      return `SMTP${status} delivery failed${error.code && /^[A-Z_]+$/.test(error.code) ? ` (${error.code})` : ''}`;
  }
}

/** A whole send (connect, greeting, TLS, login, message) takes at most this many timeouts. */
export const SEND_DEADLINE_FACTOR = 3;

export class EmailChannel {
  private readonly transporter: Transporter;
  private readonly options: EmailOptions;

  constructor(options: EmailOptions) {
    this.options = options;
    this.transporter = nodemailer.createTransport({
      host: options.host,
      port: options.port,
      secure: options.port === 465,
      requireTLS: options.requireTls,
      auth: options.username ? { user: options.username, pass: options.password ?? '' } : undefined,
      connectionTimeout: options.timeoutMs,
      greetingTimeout: options.timeoutMs,
      socketTimeout: options.timeoutMs,
    });
  }

  async send(message: EventMessage, messageId: string): Promise<AttemptResult> {
    const description = describeEvent(message);
    const started = performance.now();
    try {
      // Each of nodemailer's timeouts is the setting's, and a trickling server restarts the socket's:
      // one deadline bounds the whole send, so the outbox's claim on it outlasts it.
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(Object.assign(new Error('deadline'), { code: 'ETIMEDOUT' })), this.options.timeoutMs * SEND_DEADLINE_FACTOR);
      });
      try {
        await Promise.race([
          this.transporter.sendMail({
            from: this.options.sender,
            to: this.options.recipients,
            subject: `[${this.options.serviceName ?? 'modelgate'}] ${description.title}`.replace(/\s+/g, ' '),
            messageId: messageIdHeader(messageId),
            text: plainBody(message, description),
            html: htmlBody(message, description),
          }),
          deadline,
        ]);
      } finally {
        clearTimeout(timer);
      }
    } catch (error) {
      const failure = (error ?? {}) as SmtpFailure;
      throw new DeliveryError(smtpFailureText(failure), {
        statusCode: typeof failure.responseCode === 'number' ? failure.responseCode : null,
        latencyMs: Math.round(performance.now() - started),
      });
    }
    return { statusCode: 250, latencyMs: Math.round(performance.now() - started) };
  }

  close(): void {
    this.transporter.close();
  }
}
