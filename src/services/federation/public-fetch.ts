import { request } from 'node:https';
import { isInternalHost, publicOnlyLookup } from '../../util/public-address.js';

/**
 * openid-client's fetch for a provider an org configured: https only, to public addresses only
 * (the name is judged as it is resolved, so a name rebound to an internal address is caught where
 * the connection is made), at most 1 MiB answered. An org administrator must not aim Sesame, with
 * the provider's client secret, at the network it runs in (the back-channel logout's rule).
 */
const MAX_ANSWER = 1024 * 1024;

export interface FetchInit {
  method?: string;
  headers?: ConstructorParameters<typeof Headers>[0];
  body?: unknown;
  signal?: AbortSignal | null;
}

function bodyOf(body: unknown): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new Error('unsupported request body');
}

export function publicOnlyFetch(url: string, init: FetchInit = {}): Promise<Response> {
  const target = new URL(url);
  if (target.protocol !== 'https:' || isInternalHost(target.hostname)) return Promise.reject(new Error(`${target.host} is not a public https address`));
  const body = bodyOf(init.body);
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((value, name) => {
    headers[name] = value;
  });
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    // A connection of its own (agent: false), as the back-channel logout's: none to a host an org named is kept in a pool.
    const req = request(target, { method: init.method ?? 'GET', headers, lookup: publicOnlyLookup, agent: false, ...(init.signal ? { signal: init.signal } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_ANSWER) req.destroy(new Error(`${target.host} answered more than 1 MiB`));
        else chunks.push(chunk);
      });
      res.on('end', () => {
        const status = res.statusCode ?? 502;
        const out = new Headers();
        for (const [name, value] of Object.entries(res.headers)) for (const v of [value ?? []].flat()) out.append(name, v);
        resolve(new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), { status, headers: out }));
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}
