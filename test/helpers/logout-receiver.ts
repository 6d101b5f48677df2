import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An app's back-channel logout endpoint, as a real HTTP server in the test: it records every
 * request (path, content type, the `logout_token`) and answers as the test tells it to: accept
 * (200), fail (503), redirect (302, which must not be followed) or hang (never answers).
 */
export type ReceiverMode = 'accept' | 'fail' | 'redirect' | 'hang';

export interface ReceivedLogout {
  path: string;
  method: string;
  contentType: string | undefined;
  logoutToken: string | undefined;
  /** The mode the request was answered in. */
  answer: ReceiverMode;
}

export class LogoutReceiver {
  mode: ReceiverMode = 'accept';
  readonly received: ReceivedLogout[] = [];
  private readonly hanging = new Set<ServerResponse>();
  private waiters: (() => void)[] = [];

  private constructor(private readonly server: Server) {}

  static async start(port = 0): Promise<LogoutReceiver> {
    const server = createServer();
    const receiver = new LogoutReceiver(server);
    server.on('request', (req, res) => receiver.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The accepted logouts for `path`. */
  accepted(path: string): ReceivedLogout[] {
    return this.received.filter((r) => r.path === path && r.answer === 'accept');
  }

  attempts(path: string): ReceivedLogout[] {
    return this.received.filter((r) => r.path === path);
  }

  /** Resolves once `count` requests have arrived in all (for a hanging receiver, whose sender does not finish). */
  async arrived(count: number): Promise<void> {
    while (this.received.length < count) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = this.mode;
      const body = Buffer.concat(chunks).toString('utf8');
      this.received.push({
        path: req.url ?? '',
        method: req.method ?? '',
        contentType: req.headers['content-type'],
        logoutToken: new URLSearchParams(body).get('logout_token') ?? undefined,
        answer,
      });
      const waiters = this.waiters;
      this.waiters = [];
      for (const w of waiters) w();
      if (answer === 'accept') res.writeHead(200, { 'cache-control': 'no-store' }).end();
      else if (answer === 'fail') res.writeHead(503, { 'content-type': 'text/plain' }).end('down for maintenance');
      else if (answer === 'redirect') res.writeHead(302, { location: '/elsewhere' }).end();
      else this.hanging.add(res);
    });
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
