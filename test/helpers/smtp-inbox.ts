// A real SMTP server on loopback (the `smtp-server` package) that keeps every message it
// receives, for tests of the mail lmgate sends: the message goes over SMTP as it would to
// the operator's server, and the test reads it back.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  /** The body, with quoted-printable soft breaks and escapes undone. */
  text: string;
}

export interface SmtpInbox {
  port: number;
  messages: ReceivedMail[];
  /** Logins the server accepted, as user:password. */
  logins: string[];
  /** The first message to `to` not yet taken, waiting up to `timeoutMs`. */
  next(to: string, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export async function startSmtpInbox(credentials?: { user: string; password: string }): Promise<SmtpInbox> {
  const messages: ReceivedMail[] = [];
  const taken = new Set<ReceivedMail>();
  const logins: string[] = [];
  const waiters: (() => void)[] = [];
  const server = new SMTPServer({
    disabledCommands: credentials ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    // Plain-text AUTH over loopback without TLS, as a test server may.
    allowInsecureAuth: true,
    authOptional: credentials === undefined,
    logger: false,
    onAuth(auth, _session, done) {
      if (credentials && auth.username === credentials.user && auth.password === credentials.password) {
        logins.push(`${auth.username}:${auth.password}`);
        return done(null, { user: auth.username });
      }
      return done(new Error('invalid credentials'));
    },
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        messages.push(parseMail(Buffer.concat(chunks).toString('utf8'), session.envelope));
        for (const wake of waiters.splice(0)) wake();
        done();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;

  return {
    port,
    messages,
    logins,
    async next(to, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = messages.find((mail) => !taken.has(mail) && mail.to.includes(to));
        if (found) {
          taken.add(found);
          return found;
        }
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no mail to ${to} within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function parseMail(raw: string, envelope: { mailFrom: false | { address: string }; rcptTo: { address: string }[] }): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const header = (name: string): string => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1]?.trim() ?? '';
  const quotedPrintable = /quoted-printable/i.test(header('Content-Transfer-Encoding'));
  const text = quotedPrintable
    ? body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    : body;
  return {
    from: envelope.mailFrom ? envelope.mailFrom.address : '',
    to: envelope.rcptTo.map((rcpt) => rcpt.address),
    subject: header('Subject'),
    text,
  };
}
