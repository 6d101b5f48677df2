import { createPublicKey, generateKeyPairSync, hash, randomBytes, sign, timingSafeEqual, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { open } from 'lmdb';
import uWS from 'uWebSockets.js';

/**
 * The ceiling: a bare server on Sesame's own stack (uWS, node:crypto, lmdb with the same durability)
 * that does only the irreducible work of each bench scenario, so the bench can print how close
 * Sesame comes to the limit of this machine and these libraries. Run as a child process; prints one
 * JSON line with its issuer and clients.
 *
 * Per request, and nothing more:
 * - every endpoint: read the body, decode Basic credentials, SHA-256 the secret and compare it in
 *   constant time with the stored digest, parse the form;
 * - client_credentials, opaque: 32 random bytes, one put of the SHA-256 of the token (a msgpack record
 *   of the claims Sesame stores) waiting for the same sync as Sesame's default (`flush`: commit and fsync);
 * - client_credentials, JWT: header and claims JSON, one signature on the event loop (node:crypto);
 * - introspection: one get by the SHA-256 of the token, the expiry and audience checked, the JSON answer;
 * - revocation: one get (the token is the client's), one remove waiting for the sync.
 * No checks Sesame makes beyond those (user and org state, project checks, revocation horizons) and no
 * logging: what Sesame spends above this is its own overhead or the price of its checks.
 */
export type Alg = 'RS256' | 'ES256' | 'EdDSA';
const ALGS: Alg[] = ['RS256', 'ES256', 'EdDSA'];

interface Client {
  secretDigest: Buffer;
  kind: 'opaque' | 'jwt' | 'introspect';
  alg?: Alg;
}

interface TokenRecord {
  clientId: string;
  sub: string;
  aud: string[];
  scope: string;
  iat: number;
  exp: number;
}

// As src/util/hash.ts.
const sha256 = (value: string | Buffer) => hash('sha256', value, 'buffer');

function signJws(alg: Alg, key: KeyObject, input: string): string {
  switch (alg) {
    case 'RS256':
      return sign('sha256', Buffer.from(input), key).toString('base64url');
    case 'ES256':
      return sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url');
    case 'EdDSA':
      return sign(null, Buffer.from(input), key).toString('base64url');
  }
}

function newKey(alg: Alg): KeyObject {
  const pair = alg === 'RS256' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : alg === 'ES256' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('ed25519');
  return pair.privateKey;
}

export interface Ceiling {
  issuer: string;
  durability: 'flush' | 'commit';
  /** The one client secret every client has. */
  secret: string;
  clients: { opaque: string; introspect: string; jwt: Record<Alg, string> };
  close(): Promise<void>;
}

export async function startCeiling(durability: 'flush' | 'commit' = 'flush', listenPort = 0): Promise<Ceiling> {
  const dir = mkdtempSync(join(tmpdir(), 'sesame-ceiling-'));
  const root = open({ path: join(dir, 'ceiling.lmdb'), maxDbs: 4, mapSize: 8 * 1024 ** 3, encoding: 'msgpack', noMemInit: true });
  const tokens = root.openDB<TokenRecord, Buffer>({ name: 'tokens', encoding: 'msgpack', keyEncoding: 'binary' });
  // As src/storage/db.ts: in flush mode a write counts once lmdb's overlapping sync has flushed it.
  const durable = async <T>(write: Promise<T>): Promise<T> => {
    const result = await write;
    if (durability === 'flush') await root.flushed;
    return result;
  };

  const secret = randomBytes(32).toString('base64url');
  const clients = new Map<string, Client>();
  const audience = 'ceiling-project';
  clients.set('ceiling-opaque', { secretDigest: sha256(secret), kind: 'opaque' });
  clients.set('ceiling-introspect', { secretDigest: sha256(secret), kind: 'introspect' });
  const keys = new Map<Alg, { kid: string; key: KeyObject; header: string }>();
  for (const alg of ALGS) {
    clients.set(`ceiling-jwt-${alg}`, { secretDigest: sha256(secret), kind: 'jwt', alg });
    const kid = randomBytes(8).toString('hex');
    keys.set(alg, { kid, key: newKey(alg), header: Buffer.from(JSON.stringify({ alg, kid, typ: 'JWT' })).toString('base64url') });
  }

  const authenticate = (authorization: string): { id: string; client: Client } | undefined => {
    if (!authorization.startsWith('Basic ')) return undefined;
    const decoded = Buffer.from(authorization.slice(6), 'base64').toString();
    const colon = decoded.indexOf(':');
    if (colon < 0) return undefined;
    let id: string;
    let secret: string;
    try {
      id = decodeURIComponent(decoded.slice(0, colon));
      secret = decodeURIComponent(decoded.slice(colon + 1));
    } catch {
      return undefined;
    }
    const client = clients.get(id);
    if (!client) return undefined;
    return timingSafeEqual(sha256(secret), client.secretDigest) ? { id, client } : undefined;
  };

  let issuer = '';
  const app = uWS.App();
  /** Reads the body, then answers with what `handle` resolves to (status and JSON). */
  const post = (path: string, handle: (auth: { id: string; client: Client } | undefined, form: URLSearchParams) => Promise<[string, unknown]> | [string, unknown]) =>
    app.post(path, (res, req) => {
      const authorization = req.getHeader('authorization');
      let aborted = false;
      res.onAborted(() => (aborted = true));
      const chunks: Buffer[] = [];
      res.onData((chunk, last) => {
        chunks.push(Buffer.from(chunk.slice(0)));
        if (!last) return;
        const form = new URLSearchParams(Buffer.concat(chunks).toString());
        const answer = ([status, body]: [string, unknown]) => {
          if (aborted) return;
          res.cork(() => {
            res.writeStatus(status).writeHeader('content-type', 'application/json').writeHeader('cache-control', 'no-store').end(JSON.stringify(body));
          });
        };
        // A failed write is answered (and counted as non-2xx), not a crash of the ceiling; a
        // synchronous answer (introspection) takes no promise hop.
        const failed = (error: unknown) => answer(['500 Internal Server Error', { error: 'server_error', error_description: String(error) }]);
        try {
          const result = handle(authenticate(authorization), form);
          if (result instanceof Promise) result.then(answer, failed);
          else answer(result);
        } catch (error) {
          failed(error);
        }
      });
    });

  const invalidClient: [string, unknown] = ['401 Unauthorized', { error: 'invalid_client' }];

  post('/oauth/v2/token', async (auth, form) => {
    if (!auth || auth.client.kind === 'introspect') return invalidClient;
    if (form.get('grant_type') !== 'client_credentials') return ['400 Bad Request', { error: 'unsupported_grant_type' }];
    const scope = form.get('scope') ?? '';
    const iat = Math.floor(Date.now() / 1000);
    const exp = iat + 43200;
    if (auth.client.kind === 'jwt') {
      const signing = keys.get(auth.client.alg!)!;
      const claims = { iss: issuer, sub: auth.id, aud: [audience, auth.id], exp, iat, nbf: iat, client_id: auth.id, jti: randomBytes(16).toString('base64url'), scope };
      const input = `${signing.header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
      return ['200 OK', { access_token: `${input}.${signJws(auth.client.alg!, signing.key, input)}`, token_type: 'Bearer', expires_in: 43200 }];
    }
    const token = randomBytes(32).toString('base64url');
    await durable(tokens.put(sha256(token), { clientId: auth.id, sub: auth.id, aud: [audience, auth.id], scope, iat, exp }));
    return ['200 OK', { access_token: token, token_type: 'Bearer', expires_in: 43200 }];
  });

  post('/oauth/v2/introspect', (auth, form) => {
    if (auth?.client.kind !== 'introspect') return invalidClient;
    const record = tokens.get(sha256(form.get('token') ?? ''));
    if (!record || record.exp <= Date.now() / 1000 || !record.aud.includes(audience)) return ['200 OK', { active: false }];
    return [
      '200 OK',
      { active: true, scope: record.scope, client_id: record.clientId, token_type: 'Bearer', exp: record.exp, iat: record.iat, nbf: record.iat, sub: record.sub, aud: record.aud, iss: issuer },
    ];
  });

  post('/oauth/v2/revoke', async (auth, form) => {
    if (!auth || auth.client.kind === 'introspect') return invalidClient;
    const key = sha256(form.get('token') ?? '');
    const record = tokens.get(key);
    if (record && record.clientId === auth.id) await durable(tokens.remove(key));
    return ['200 OK', {}];
  });

  // Documents that do not change are built once, as Sesame caches them.
  let discovery = '';
  const jwks = JSON.stringify({ keys: [...keys].map(([alg, { kid, key }]) => ({ ...createPublicKey(key).export({ format: 'jwk' }), kid, alg, use: 'sig' })) });
  const document = (path: string, body: () => string) =>
    app.get(path, (res) => {
      res.writeHeader('content-type', 'application/json').end(body());
    });
  document('/.well-known/openid-configuration', () => discovery);
  document('/oauth/v2/keys', () => jwks);
  app.any('/*', (res) => {
    res.writeStatus('404 Not Found').end();
  });

  const listening = await new Promise<uWS.us_listen_socket>((resolve, reject) => app.listen('127.0.0.1', listenPort, (socket) => (socket ? resolve(socket) : reject(new Error('listen failed')))));
  const port = uWS.us_socket_local_port(listening as unknown as uWS.us_socket);
  issuer = `http://127.0.0.1:${port}`;
  discovery = JSON.stringify({
    issuer,
    token_endpoint: `${issuer}/oauth/v2/token`,
    introspection_endpoint: `${issuer}/oauth/v2/introspect`,
    revocation_endpoint: `${issuer}/oauth/v2/revoke`,
    jwks_uri: `${issuer}/oauth/v2/keys`,
    grant_types_supported: ['client_credentials'],
    token_endpoint_auth_methods_supported: ['client_secret_basic'],
  });
  return {
    issuer,
    durability,
    secret,
    clients: { opaque: 'ceiling-opaque', introspect: 'ceiling-introspect', jwt: Object.fromEntries(ALGS.map((alg) => [alg, `ceiling-jwt-${alg}`])) as Record<Alg, string> },
    async close() {
      uWS.us_listen_socket_close(listening);
      await root.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function main(): Promise<void> {
  const ceiling = await startCeiling(process.env.CEILING_DURABILITY === 'commit' ? 'commit' : 'flush', Number(process.env.CEILING_PORT ?? '0'));
  const { close, ...ready } = ceiling;
  process.stdout.write(`${JSON.stringify({ ready: true, ...ready })}\n`);
  process.on('SIGTERM', () => {
    close().finally(() => process.exit(0));
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
    process.exit(1);
  });
}
