import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Exposition } from './exposition.js';

/**
 * The metrics listener: `GET /metrics` on a port of its own (SESAME_METRICS_PORT), never on the
 * public one, so metrics are not served to the internet by accident. On the main thread with
 * node:http: a scrape every few seconds needs none of uWS's speed, and it stays off the HTTP
 * threads' hot path. With a token, a scrape must send `Authorization: Bearer <token>`.
 */
export interface ScrapeListener {
  readonly port: number;
  close(): Promise<void>;
}

export class ScrapeListenError extends Error {
  constructor(
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

const digest = (text: string) => createHash('sha256').update(text).digest();

export function startScrapeListener(options: { host: string; port: number; token: string | undefined; exposition: Exposition }): Promise<ScrapeListener> {
  const { exposition } = options;
  // Compared as digests: equal lengths for timingSafeEqual, and the time does not tell the token's length.
  const expected = options.token === undefined ? undefined : digest(`Bearer ${options.token}`);
  const answer = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...headers });
    res.end(body);
  };
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== '/metrics') return answer(res, 404, 'not found: metrics are at /metrics\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return answer(res, 405, 'method not allowed\n', { Allow: 'GET, HEAD' });
    if (expected && !timingSafeEqual(digest(req.headers.authorization ?? ''), expected)) {
      return answer(res, 401, 'a bearer token is required (SESAME_METRICS_TOKEN)\n', { 'WWW-Authenticate': 'Bearer realm="sesame metrics"' });
    }
    exposition.text().then(
      (text) => answer(res, 200, req.method === 'HEAD' ? '' : text, { 'Content-Type': exposition.contentType }),
      (error: unknown) => answer(res, 500, `metrics failed: ${String(error)}\n`),
    );
  };
  const server = createServer(serve);
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(new ScrapeListenError(error.code, error.message)));
    server.listen({ host: options.host, port: options.port, exclusive: true }, () => {
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
