import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import { generate } from 'selfsigned';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';

/**
 * A real SMTP receiver for tests (smtp-server), each mail parsed with mailparser: what a person's
 * mailbox would get, with its recipient, subject, language and links. It can ask for a login, offer
 * STARTTLS or speak implicit TLS with a certificate made for the test (`ca` is what the client must
 * trust), or refuse mail for a while (a relay that is down).
 */
export interface ReceivedMail {
  to: string;
  from: string;
  subject: string;
  text: string;
  html: string;
  language: string | undefined;
  /** Every http(s) link in the HTML part. */
  links: string[];
  parsed: ParsedMail;
}

export interface SmtpReceiver {
  host: string;
  port: number;
  /** The test CA's certificate (TLS receivers). */
  ca: string | undefined;
  mails: ReceivedMail[];
  /** Logins seen (user names). */
  logins: string[];
  /** Whether each session used TLS. */
  secureSessions: boolean[];
  /** Resolves with the next mail to `to` (already received ones first). */
  next(to: string, timeoutMs?: number): Promise<ReceivedMail>;
  /** Refuse mail (`451`) while set. */
  refuse: boolean;
  close(): Promise<void>;
}

export async function startSmtpReceiver(options: { tls?: 'starttls' | 'implicit'; auth?: { user: string; pass: string } } = {}): Promise<SmtpReceiver> {
  let cert: { cert: string; key: string } | undefined;
  if (options.tls) {
    // A subject of its own: two test CAs with one name would be taken for each other.
    const pems = await generate([{ name: 'commonName', value: `Sesame test relay ${randomUUID()}` }], {
      keySize: 2048,
      extensions: [
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 7, ip: '127.0.0.1' },
          ],
        },
      ],
    });
    cert = { cert: pems.cert, key: pems.private };
  }
  const mails: ReceivedMail[] = [];
  const logins: string[] = [];
  const secureSessions: boolean[] = [];
  const waiters: { to: string; resolve: (mail: ReceivedMail) => void }[] = [];
  const state = { refuse: false };
  const serverOptions: SMTPServerOptions = {
    secure: options.tls === 'implicit',
    ...(cert ? { key: cert.key, cert: cert.cert } : {}),
    disabledCommands: [...(options.tls ? [] : ['STARTTLS']), ...(options.auth ? [] : ['AUTH'])],
    authOptional: !options.auth,
    allowInsecureAuth: false,
    hideSTARTTLS: !options.tls,
    logger: false,
    onAuth(auth, _session, callback) {
      if (options.auth && auth.username === options.auth.user && auth.password === options.auth.pass) {
        logins.push(auth.username ?? '');
        callback(null, { user: auth.username });
      } else {
        callback(new Error('535 authentication failed'));
      }
    },
    onMailFrom(_address, _session, callback) {
      if (state.refuse) {
        const error = new Error('mailbox unavailable, try later') as Error & { responseCode: number };
        error.responseCode = 451;
        return callback(error);
      }
      callback();
    },
    onData(stream, session, callback) {
      secureSessions.push(session.secure);
      simpleParser(stream)
        .then((parsed) => {
          const html = typeof parsed.html === 'string' ? parsed.html : '';
          const to = (Array.isArray(parsed.to) ? parsed.to[0] : parsed.to)?.value[0]?.address ?? '';
          const mail: ReceivedMail = {
            to,
            from: parsed.from?.value[0]?.address ?? '',
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html,
            language: /<html[^>]*\slang="([^"]+)"/.exec(html)?.[1],
            links: [...html.matchAll(/href="(https?:[^"]+)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&')),
            parsed,
          };
          mails.push(mail);
          for (const waiter of waiters.splice(0).filter((w) => w.to.toLowerCase() === to.toLowerCase() || (waiters.push(w), false))) waiter.resolve(mail);
          callback();
        })
        .catch(callback);
    },
  };
  const server = new SMTPServer(serverOptions);
  // A client that gives up on the handshake (a certificate it does not trust) is no receiver failure.
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  const taken = new Set<ReceivedMail>();
  return {
    host: `localhost:${port}`,
    port,
    ca: cert?.cert,
    mails,
    logins,
    secureSessions,
    get refuse() {
      return state.refuse;
    },
    set refuse(value: boolean) {
      state.refuse = value;
    },
    next(to, timeoutMs = 10_000) {
      const already = mails.find((m) => m.to.toLowerCase() === to.toLowerCase() && !taken.has(m));
      if (already) {
        taken.add(already);
        return Promise.resolve(already);
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no mail to ${to} within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          to,
          resolve: (mail) => {
            clearTimeout(timer);
            taken.add(mail);
            resolve(mail);
          },
        });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
