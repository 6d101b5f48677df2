import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { PeerAdapter, PeerStore } from './oidc-provider-adapter.js';

/**
 * The comparison peer: panva's oidc-provider configured for the same work as Sesame's scenarios
 * (client_credentials with client_secret_basic, opaque tokens, JWT access tokens through a
 * resource indicator per algorithm, introspection and revocation), with its default in-memory
 * adapter. Run as a child process (prints one JSON line with its issuer and clients), or in-process
 * through `startPeer` (tests).
 *
 * For the browser-flow scenarios it also has an OIDC web client (authorization_code +
 * refresh_token, client_secret_basic) and its built-in development login form (devInteractions:
 * any login name signs in; the bench signs one person in once, as a browser would). The grant
 * for that client is created on first use (`loadExistingGrant`: `openid offline_access`, as a
 * first-party app needs no consent screen), so a later `prompt=none` authorize answers with a code.
 * Since oidc-provider drops `offline_access` from a request whose prompt is not `consent`, a code
 * whose request asked for it is marked as not ending with the session (`expiresWithSession`) and
 * gets a refresh token if the client has the refresh_token grant (`issueRefreshToken`); every
 * refresh rotates the token (`rotateRefreshToken`), as Sesame does.
 */
const ALGS = ['RS256', 'ES256', 'EdDSA'] as const;

/** The few parts of oidc-provider's context the hooks below touch (the package ships no types). */
interface PeerClient {
  clientId: string;
  grantTypeAllowed(type: string): boolean;
}
interface PeerGrant {
  addOIDCScope(scope: string): void;
  save(): Promise<string>;
}
interface PeerContext {
  query?: Record<string, string | string[] | undefined>;
  request?: { body?: Record<string, unknown> };
  oidc: {
    client: PeerClient;
    session: { accountId: string; grantIdFor(clientId: string): string | undefined };
    result?: { consent?: { grantId?: string } };
    provider: {
      Grant: { new (init: { clientId: string; accountId: string }): PeerGrant; find(id: string): Promise<PeerGrant | undefined> };
    };
  };
}

export interface Peer {
  issuer: string;
  ccClient: { id: string; secret: string };
  introspector: { id: string; secret: string };
  webClient: { id: string; secret: string };
  redirectUri: string;
  close(): Promise<void>;
}

/** Starts the peer on 127.0.0.1 (`port` 0: any free port). */
export async function startPeer(port = 0): Promise<Peer> {
  const keys: Record<string, unknown>[] = [];
  for (const alg of ALGS) {
    const { privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
    keys.push({ ...(await exportJWK(privateKey)), alg, use: 'sig', kid: `peer-${alg}` });
  }
  const ccSecret = randomBytes(32).toString('base64url');
  const introspectSecret = randomBytes(32).toString('base64url');
  const webSecret = randomBytes(32).toString('base64url');
  const redirectUri = 'http://localhost:9999/callback';
  const placeholder = 'http://127.0.0.1';

  const build = (issuer: string) =>
    new Provider(issuer, {
      clients: [
        {
          client_id: 'bench-cc',
          client_secret: ccSecret,
          grant_types: ['client_credentials'],
          redirect_uris: [],
          response_types: [],
          token_endpoint_auth_method: 'client_secret_basic',
        },
        {
          client_id: 'bench-introspect',
          client_secret: introspectSecret,
          grant_types: [],
          redirect_uris: [],
          response_types: [],
          token_endpoint_auth_method: 'client_secret_basic',
        },
        {
          client_id: 'bench-web',
          client_secret: webSecret,
          grant_types: ['authorization_code', 'refresh_token'],
          redirect_uris: [redirectUri],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      // Any login name is an account whose only claim is `sub`.
      findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
      // The session's grant for the client, or (first sign-in) a new one with the scopes the
      // browser-flow scenarios ask for, so no consent screen shows.
      loadExistingGrant: async ({ oidc }: PeerContext) => {
        const grantId = oidc.result?.consent?.grantId || oidc.session.grantIdFor(oidc.client.clientId);
        if (grantId) return oidc.provider.Grant.find(grantId);
        const grant = new oidc.provider.Grant({ clientId: oidc.client.clientId, accountId: oidc.session.accountId });
        grant.addOIDCScope('openid offline_access');
        await grant.save();
        return grant;
      },
      // oidc-provider drops offline_access from an authorization request whose prompt is not
      // `consent` (so from every prompt=none one). The code remembers whether the relying party
      // asked for it (read from the request as sent): such codes (the refresh scenario's) get a
      // refresh token that outlives the session, the others (code-flow's `openid`) none, as on Sesame.
      expiresWithSession: async (ctx: PeerContext) => !requestedScope(ctx).includes('offline_access'),
      issueRefreshToken: async (_ctx: unknown, client: PeerClient, code: { expiresWithSession?: boolean }) => client.grantTypeAllowed('refresh_token') && code.expiresWithSession !== true,
      rotateRefreshToken: true,
      // oidc-provider's in-memory adapter semantics on constant-time storage (oidc-provider-adapter.ts).
      adapter: (() => {
        const store = new PeerStore();
        return (model: string) => new PeerAdapter(model, store);
      })(),
      jwks: { keys },
      features: {
        devInteractions: { enabled: true },
        clientCredentials: { enabled: true },
        introspection: { enabled: true },
        revocation: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => undefined,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, resource: string) => {
            const alg = resource.replace('urn:bench:', '');
            if (!(ALGS as readonly string[]).includes(alg)) throw new Error('unknown resource');
            return { scope: 'api', audience: resource, accessTokenFormat: 'jwt', jwt: { sign: { alg } } };
          },
        },
      },
      scopes: ['openid', 'offline_access', 'api'],
      clientBasedCORS: () => true,
    });

  // Bind first to learn the port, then create the provider with the matching issuer.
  const { createServer } = await import('node:http');
  let handle: ReturnType<Provider['callback']> | undefined;
  const server = createServer((req, res) => handle!(req, res));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as { port: number }).port;
  handle = build(`${placeholder}:${bound}`).callback();
  return {
    issuer: `${placeholder}:${bound}`,
    ccClient: { id: 'bench-cc', secret: ccSecret },
    introspector: { id: 'bench-introspect', secret: introspectSecret },
    webClient: { id: 'bench-web', secret: webSecret },
    redirectUri,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The scopes of an authorization request as the relying party sent them. */
function requestedScope(ctx: PeerContext): string[] {
  const scope = ctx.query?.scope ?? ctx.request?.body?.scope;
  return typeof scope === 'string' ? scope.split(' ') : [];
}

async function main(): Promise<void> {
  const { close, ...peer } = await startPeer(Number(process.env.PEER_PORT ?? '0'));
  process.stdout.write(`${JSON.stringify({ ready: true, ...peer })}\n`);
  process.on('SIGTERM', () => void close().then(() => process.exit(0)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
    process.exit(1);
  });
}
