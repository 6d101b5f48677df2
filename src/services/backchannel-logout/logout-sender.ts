import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { logoutAccepted, logoutRequestBody } from '../../protocol/logout-token.js';
import { isInternalHost, publicOnlyLookup } from '../../util/public-address.js';

/** How much of a receiver's answer is read (for the log line of a failure); the rest is dropped. */
const MAX_ANSWER_BYTES = 4096;

export type DeliveryOutcome = { delivered: true } | { delivered: false; reason: string };

export interface SendOptions {
  /** Deadline for the whole exchange, connecting to the last byte read (ms). */
  timeoutMs: number;
  /** Aborts the request (shutdown). */
  signal?: AbortSignal;
  /** Only to public addresses: no instance role vouches for the receiver (AppRecord.logoutReceiverByInstance). */
  publicOnly?: boolean;
}

/**
 * A logout token POSTed to an app's back-channel
 * logout URI (Back-Channel Logout 1.0 §2.5). Receivers are registered by administrators, so any
 * host may be one; what bounds the harm of a slow, hostile or misconfigured one is here: http(s)
 * only, no redirect followed, a deadline for the whole exchange, a connection of its own closed
 * afterwards (nothing pooled for a receiver that never answers), and at most a few KiB of its
 * answer read.
 */
export function sendLogoutToken(uri: string, token: string, options: SendOptions): Promise<DeliveryOutcome> {
  let target: URL;
  try {
    target = new URL(uri);
  } catch {
    return Promise.resolve({ delivered: false, reason: 'the back-channel logout URI is not a URL' });
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    return Promise.resolve({ delivered: false, reason: `scheme ${target.protocol} is not http(s)` });
  }
  // An address in the URI is checked here; a name, when it is resolved (publicOnlyLookup).
  if (options.publicOnly && isInternalHost(target.hostname)) {
    return Promise.resolve({ delivered: false, reason: `${target.hostname} is not a public address (no instance administrator set this receiver)` });
  }
  const body = logoutRequestBody(token);
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
  return new Promise<DeliveryOutcome>((resolve) => {
    let settled = false;
    const settle = (outcome: DeliveryOutcome) => {
      if (settled) return;
      settled = true;
      req.destroy();
      resolve(outcome);
    };
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(target, {
      method: 'POST',
      // A connection per delivery, closed after it: logouts are rare, and a pooled socket would
      // outlive the attempt (and keep a hanging receiver's connection open).
      agent: false,
      signal,
      ...(options.publicOnly ? { lookup: publicOnlyLookup } : {}),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'content-length': Buffer.byteLength(body),
        'cache-control': 'no-store',
        'user-agent': 'Sesame back-channel logout',
      },
    });
    req.on('response', (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      if (logoutAccepted(status)) {
        settle({ delivered: true });
        return;
      }
      const chunks: Buffer[] = [];
      let read = 0;
      const done = () => {
        const text = Buffer.concat(chunks).toString('utf8').slice(0, 200).replace(/\s+/g, ' ').trim();
        settle({ delivered: false, reason: `HTTP ${status}${text ? `: ${text}` : ''}` });
      };
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        read += chunk.length;
        if (read >= MAX_ANSWER_BYTES) done();
      });
      res.on('end', done);
      res.on('error', done);
    });
    req.on('error', (error: Error) => {
      const reason = deadline.aborted ? `no answer within ${options.timeoutMs} ms` : options.signal?.aborted ? 'stopped (shutdown)' : error.message || String(error);
      settle({ delivered: false, reason });
    });
    req.end(body);
  });
}
