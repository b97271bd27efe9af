// E-mail alerts against a real SMTP server (smtp-server) on a port of 127.0.0.1: what arrives
// (headers, text and HTML parts), and how failures read — never with the username or password,
// even when the server echoes them back.
import t, { type Test } from 'tap';
import { createServer, type AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { EmailChannel, type EmailOptions } from '../../plugins/events/email.js';
import { DeliveryError, type EventMessage } from '../../plugins/events/types.js';

const USERNAME = 'alerts-user';
const PASSWORD = 'pa55-Secret-never-shown';

interface Received {
  from: string | undefined;
  to: string[];
  raw: string;
}

async function startSmtp(t: Test, options: SMTPServerOptions = {}, port = 0) {
  const received: Received[] = [];
  const server = new SMTPServer({
    hideSTARTTLS: true,
    authOptional: true,
    disabledCommands: [],
    logger: false,
    ...options,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.server.address() as AddressInfo).port, received };
}

/** A port nothing listens on: bound by the system, then released. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

function channel(t: Test, port: number, extra: Partial<EmailOptions> = {}) {
  const email = new EmailChannel({
    host: '127.0.0.1',
    port,
    requireTls: false,
    sender: 'modelgate <alerts@example.test>',
    recipients: ['ops@example.test', 'oncall@example.test'],
    timeoutMs: 3000,
    ...extra,
  });
  t.teardown(() => email.close());
  return email;
}

/** Header value by name, unfolded (RFC 5322 folding). */
function header(raw: string, name: string): string | undefined {
  const head = raw.slice(0, raw.indexOf('\r\n\r\n')).replace(/\r\n[ \t]+/g, ' ');
  const line = head.split('\r\n').find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}

/** The decoded body of the MIME part with this content type (quoted-printable, base64 or plain). */
function part(raw: string, contentType: string): string {
  const boundary = /boundary="?([^";\r\n]+)"?/.exec(raw)?.[1];
  if (!boundary) throw new Error('not multipart');
  const found = raw.split(`--${boundary}`).find((p) => new RegExp(`^content-type:\\s*${contentType}`, 'im').test(p));
  if (!found) throw new Error(`no ${contentType} part`);
  const split = found.indexOf('\r\n\r\n');
  const headers = found.slice(0, split);
  const body = found.slice(split + 4);
  const encoding = /content-transfer-encoding:\s*(\S+)/i.exec(headers)?.[1]?.toLowerCase();
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') {
    const bytes = body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => `%${hex}`);
    return decodeURIComponent(bytes.replace(/%(?![0-9A-F]{2})/gi, '%25'));
  }
  return body;
}

const down: EventMessage = {
  type: 'provider.down',
  timestamp: '2026-11-25T14:00:00.000Z',
  data: { provider: 'openai', failures: 5, window_seconds: 60, last_error: '<script>alert("x")</script> & more' },
};

t.test('an alert arrives with its headers, a text part and an escaped HTML part', async (t) => {
  const smtp = await startSmtp(t);
  const result = await channel(t, smtp.port).send(down, 'msg_123');
  t.equal(result.statusCode, 250);
  t.type(result.latencyMs, 'number');
  t.equal(smtp.received.length, 1);
  const [mail] = smtp.received;
  t.equal(mail!.from, 'alerts@example.test');
  t.same(mail!.to, ['ops@example.test', 'oncall@example.test']);
  t.equal(header(mail!.raw, 'From'), 'modelgate <alerts@example.test>');
  t.equal(header(mail!.raw, 'To'), 'ops@example.test, oncall@example.test');
  t.equal(header(mail!.raw, 'Subject'), '[modelgate] Provider openai is down');
  t.equal(header(mail!.raw, 'Message-ID'), '<msg_123@modelgate>');

  const text = part(mail!.raw, 'text/plain');
  t.match(text, '5 requests to openai failed within the last minute.');
  t.match(text, /Last error: +<script>alert\("x"\)<\/script> & more/);
  t.match(text, 'Next: Requests fail over to other providers');
  t.match(text, 'Event: provider.down at 2026-11-25T14:00:00.000Z');

  const html = part(mail!.raw, 'text/html');
  t.match(html, '<h2>Provider openai is down</h2>');
  t.match(html, '&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; more');
  t.notMatch(html, '<script>', 'the data value never becomes markup');
  t.match(html, '<th align="left" style="padding:2px 12px 2px 0">Failures</th><td>5</td>');
  t.match(html, 'provider.down at 2026-11-25T14:00:00.000Z');
});

t.test('a retried delivery carries the same Message-ID, and serviceName prefixes the subject', async (t) => {
  const smtp = await startSmtp(t);
  const email = channel(t, smtp.port, { serviceName: 'acme-gw' });
  await email.send(down, 'evt_9/attempt');
  await email.send(down, 'evt_9/attempt');
  t.equal(smtp.received.length, 2);
  t.equal(header(smtp.received[0]!.raw, 'Message-ID'), '<evt_9attempt@modelgate>');
  t.equal(header(smtp.received[1]!.raw, 'Message-ID'), header(smtp.received[0]!.raw, 'Message-ID'));
  t.equal(header(smtp.received[0]!.raw, 'Subject'), '[acme-gw] Provider openai is down');
});

t.test('a server that is down fails with a DeliveryError that names no credential', async (t) => {
  const email = channel(t, await closedPort(), { username: USERNAME, password: PASSWORD });
  const error = await email.send(down, 'm1').then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(error instanceof DeliveryError);
  t.equal((error as DeliveryError).message, 'SMTP connection refused');
  t.equal((error as DeliveryError).statusCode, null);
  t.notMatch((error as DeliveryError).message, PASSWORD);
  t.notMatch((error as DeliveryError).message, USERNAME);
});

t.test('requireTls against a server without STARTTLS refuses to send', async (t) => {
  const smtp = await startSmtp(t, { disabledCommands: ['STARTTLS'] });
  const email = channel(t, smtp.port, { requireTls: true, username: USERNAME, password: PASSWORD });
  await t.rejects(email.send(down, 'm1'), DeliveryError);
  const error = (await email.send(down, 'm2').catch((e: unknown) => e)) as DeliveryError;
  t.match(error.message, /^SMTP( \d+)? TLS could not be started/);
  t.notMatch(error.message, PASSWORD);
  t.equal(smtp.received.length, 0, 'nothing was sent in the clear');
});

t.test('an authentication failure is SMTP 535 without the credentials the server echoed', async (t) => {
  const smtp = await startSmtp(t, {
    authOptional: false,
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      callback(new Error(`Invalid login ${auth.username} / ${auth.password}`));
    },
  });
  const error = (await channel(t, smtp.port, { username: USERNAME, password: PASSWORD })
    .send(down, 'm1')
    .catch((e: unknown) => e)) as DeliveryError;
  t.ok(error instanceof DeliveryError);
  t.equal(error.message, 'SMTP 535 authentication failed');
  t.equal(error.statusCode, 535);
  t.notMatch(error.message, PASSWORD);
  t.notMatch(error.message, USERNAME);
  t.equal(smtp.received.length, 0);
});

t.test('delivery fails while the server is down and works once it is back, with auth', async (t) => {
  const port = await closedPort();
  const email = channel(t, port, { username: USERNAME, password: PASSWORD });
  await t.rejects(email.send(down, 'm1'), { name: 'DeliveryError', message: 'SMTP connection refused' });
  const smtp = await startSmtp(
    t,
    {
      authOptional: false,
      allowInsecureAuth: true,
      onAuth(auth, _session, callback) {
        if (auth.username === USERNAME && auth.password === PASSWORD) callback(null, { user: auth.username });
        else callback(new Error('Invalid login'));
      },
    },
    port,
  );
  const result = await email.send(down, 'm1');
  t.equal(result.statusCode, 250);
  t.equal(smtp.received.length, 1);
  t.equal(header(smtp.received[0]!.raw, 'Message-ID'), '<m1@modelgate>');
});

t.test('a server that never greets times out within timeoutMs', async (t) => {
  const silent = createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => {
    silent.close();
  });
  const email = channel(t, (silent.address() as AddressInfo).port, { timeoutMs: 300 });
  const started = Date.now();
  const error = (await email.send(down, 'm1').catch((e: unknown) => e)) as DeliveryError;
  t.equal(error.message, 'SMTP connection timed out');
  t.ok(Date.now() - started < 2000, 'gave up quickly');
});

t.test('STARTTLS to a server whose certificate is not trusted fails instead of sending in the clear', async (t) => {
  // smtp-server's built-in certificate is self-signed (and expired): a client that checks certificates refuses it
  const smtp = await startSmtp(t, { hideSTARTTLS: false });
  const error = (await channel(t, smtp.port, { username: USERNAME, password: PASSWORD })
    .send(down, 'm1')
    .catch((e: unknown) => e)) as DeliveryError;
  t.ok(error instanceof DeliveryError);
  t.match(error.message, /^SMTP TLS certificate not trusted \([A-Z_]+\)$/);
  t.equal(smtp.received.length, 0);
});
