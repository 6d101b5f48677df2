import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import type { Agent, Step } from './oidc.js';
import type { ServerAddress } from './server.js';

/**
 * An upstream OpenID provider for federation tests: panva's oidc-provider on 127.0.0.1, with one
 * confidential client whose redirect URI is Sesame's callback. Its interaction signs in whoever the
 * test names next (`as(account)`), with the claims the test gave that account, and grants what was
 * asked: the tests drive Sesame's side, not a login form of the upstream.
 */
export interface UpstreamAccount {
  email?: string;
  email_verified?: boolean;
  given_name?: string;
  family_name?: string;
  name?: string;
  preferred_username?: string;
  locale?: string;
}

export interface UpstreamIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, UpstreamAccount>;
  /** The account the next interaction signs in. */
  as(accountId: string, claims?: UpstreamAccount): void;
  /** Authorization requests the upstream received (their query), newest last. */
  requests: URLSearchParams[];
  close(): Promise<void>;
}

interface InteractionApi {
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<{ params: Record<string, string> }>;
  interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: Record<string, unknown>): Promise<void>;
  Grant: new (init: { clientId: string; accountId: string }) => { addOIDCScope(scope: string): void; save(): Promise<string> };
}

export async function startUpstreamIdp(redirectUri: string, options: { pkceRequired?: boolean } = {}): Promise<UpstreamIdp> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const clientSecret = randomBytes(24).toString('base64url');
  const accounts = new Map<string, UpstreamAccount>();
  const requests: URLSearchParams[] = [];
  let next = '';
  let provider: Provider & InteractionApi;
  let handle: ReturnType<Provider['callback']>;
  const server = createServer((req, res) => {
    void (async () => {
      if (req.url?.startsWith('/auth?')) requests.push(new URL(req.url, 'http://x').searchParams);
      if (req.url?.startsWith('/interaction/')) {
        const details = await provider.interactionDetails(req, res);
        const grant = new provider.Grant({ clientId: details.params.client_id!, accountId: next });
        grant.addOIDCScope(details.params.scope ?? 'openid');
        await provider.interactionFinished(req, res, { login: { accountId: next }, consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: false });
        return;
      }
      handle(req, res);
    })().catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'sesame',
        client_secret: clientSecret,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: [redirectUri],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub, ...accounts.get(sub) }) }),
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'given_name', 'family_name', 'preferred_username', 'locale'] },
    jwks: { keys: [{ ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'upstream-1' }] },
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => options.pkceRequired ?? false },
  }) as Provider & InteractionApi;
  handle = provider.callback();
  return {
    issuer,
    clientId: 'sesame',
    clientSecret,
    accounts,
    requests,
    as(accountId, claims) {
      next = accountId;
      if (claims) accounts.set(accountId, claims);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The browser's trip through a provider: from Sesame's redirect to it, along its redirects (its
 * cookies kept in `upstreamAgent`), until it sends the browser back to Sesame; then on in Sesame.
 */
export async function throughUpstream(agent: Agent, sesame: ServerAddress, leaving: Step, upstreamAgent: Agent): Promise<Step> {
  let location = leaving.location;
  if (!location) throw new Error(`expected a redirect to the provider, got a page:\n${leaving.html?.slice(0, 1500)}`);
  for (let hops = 0; hops < 10; hops++) {
    const url = new URL(location);
    if (url.origin === new URL(sesame.url).origin || url.origin === new URL(sesame.issuer).origin) return agent.follow(url.pathname + url.search);
    const res = await upstreamAgent.fetch(location);
    const next = res.headers.get('location');
    if (!next) throw new Error(`the provider stopped at ${location}: ${res.status} ${(await res.text()).slice(0, 1500)}`);
    location = new URL(next, location).toString();
  }
  throw new Error('too many redirects at the provider');
}
