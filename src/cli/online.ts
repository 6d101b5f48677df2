import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

import { type CliError, failure } from './errors.js';
import type { Target } from './target.js';
import type { Progress } from './progress.js';

export interface HttpResult {
  status: number;
  body: Buffer;
}

/** HTTP to a running server: POSTs JSON to it; `upload`/`download` report bytes sent and received. */
export function post(t: Extract<Target, { kind: 'online' }>, path: string, chunks: Buffer[], progress?: Progress): Promise<HttpResult> {
  const url = new URL(path, t.url);
  const length = chunks.reduce((n, c) => n + c.length, 0);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<HttpResult>((resolvePromise, reject) => {
    const req = send(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Content-Length': length, Authorization: `Bearer ${t.token}`, Accept: 'application/json' },
    });
    req.on('error', (error: NodeJS.ErrnoException) => reject(failure(`cannot reach ${t.url.origin}: ${error.code ?? error.message}`)));
    req.on('response', (res: IncomingMessage) => {
      const total = Number(res.headers['content-length']) || undefined;
      const parts: Buffer[] = [];
      let received = 0;
      res.on('data', (chunk: Buffer) => {
        parts.push(chunk);
        received += chunk.length;
        progress?.bytes(received, total);
      });
      res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, body: Buffer.concat(parts) }));
      res.on('error', (error) => reject(failure(`${t.url.origin}: ${error.message}`)));
    });
    // Upload in pieces, waiting for the socket, so large bundles show progress and stay bounded.
    void (async () => {
      let sent = 0;
      const PIECE = 1024 * 1024;
      for (const chunk of chunks) {
        for (let at = 0; at < chunk.length; at += PIECE) {
          const piece = chunk.subarray(at, at + PIECE);
          sent += piece.length;
          if (!req.write(piece)) await new Promise((r) => req.once('drain', r));
          progress?.bytes(sent, length);
          if (req.destroyed) return;
        }
      }
      req.end();
    })();
  });
}

/** The server's answer as a CliError: status and ZITADEL's `message`. */
export function httpFailure(t: Extract<Target, { kind: 'online' }>, path: string, result: HttpResult): CliError {
  let message = result.body.toString('utf8').slice(0, 500).trim();
  try {
    const parsed = JSON.parse(result.body.toString('utf8')) as { message?: string };
    if (typeof parsed.message === 'string') message = parsed.message;
  } catch {
    /* not JSON */
  }
  const hint = result.status === 401 ? ' (check --pat-file / SESAME_PAT)' : result.status === 403 ? ' (the token must belong to an instance owner, IAM_OWNER)' : '';
  return failure(`${new URL(path, t.url).href}: HTTP ${result.status}: ${message || 'no message'}${hint}`);
}
