import type { KeyObject } from 'node:crypto';
import type { Alg } from '../args.js';

/** A provider under load: where its endpoints are and which clients the scenarios use. */
export interface Client {
  id: string;
  secret: string;
}

/** A client_credentials request: who asks, and the form body to send. */
export interface TokenRequest {
  client: Client;
  body: string;
}

export interface Endpoints {
  discovery: string;
  token: string;
  introspection: string;
  revocation: string;
  jwks: string;
  authorization?: string;
}

/** A browser sign-in already done: an OIDC app and the user-agent cookie of a signed-in person. */
export interface SignInSetup {
  client: Client;
  redirectUri: string;
  /** `Cookie` header value carrying the user-agent session. */
  cookie: string;
}

export interface PreparedTarget {
  /** `sesame`, `oidc-provider`, or `target` for --target. */
  name: string;
  issuer: string;
  endpoints: Endpoints;
  /** Several nodes (--nodes): where each is reached; the load threads are spread over them. */
  origins?: string[];
  /** Server process id, for RSS sampling (absent for external targets). */
  pid?: number;
  /** How many HTTP threads serve (Sesame), and their OS thread ids (main thread first) for per-thread CPU. */
  httpThreads?: number;
  httpThreadIds?: number[];
  /** Sesame's metrics scrape URL, when metrics are on (thread memory after each scenario). */
  metricsUrl?: string;
  ccOpaque: TokenRequest | undefined;
  ccJwt: TokenRequest | undefined;
  introspector: Client | undefined;
  /** For the code-flow and refresh scenarios (Sesame and the oidc-provider peer). */
  signIn?: SignInSetup;
  /** A machine user whose key the bench holds, for the JWT profile grant (Sesame only). */
  jwtProfile?: { userId: string; keyId: string; privateKey: KeyObject; scope: string };
  /** An app allowed to exchange tokens, and how to get subject tokens in its audience (Sesame only). */
  exchange?: { client: Client; subject: TokenRequest };
  /** The admin API (base URL and an IAM_OWNER token), for the migrate scenario (Sesame only). */
  admin?: { url: string; token: string };
  /** Notes printed with the results (e.g. the peer's adapter). */
  notes: string[];
}

/** Starts (or connects to) a provider able to sign with `alg`, reusing it where it can. */
export interface TargetFactory {
  readonly name: string;
  open(alg: Alg): Promise<PreparedTarget>;
  close(): Promise<void>;
}

export function basicAuth(client: Client): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`).toString('base64')}`;
}

/** Reads endpoint URLs from the provider's discovery document, as a relying party would. */
export async function discoverEndpoints(issuer: string): Promise<Endpoints> {
  const discovery = `${issuer}/.well-known/openid-configuration`;
  const res = await fetch(discovery);
  if (!res.ok) throw new Error(`discovery at ${discovery} answered ${res.status}`);
  const doc = (await res.json()) as Record<string, string>;
  return {
    discovery,
    token: doc.token_endpoint!,
    introspection: doc.introspection_endpoint ?? '',
    revocation: doc.revocation_endpoint ?? '',
    jwks: doc.jwks_uri!,
    ...(doc.authorization_endpoint ? { authorization: doc.authorization_endpoint } : {}),
  };
}

/** Obtains one access token with a client_credentials request. */
export async function fetchToken(target: PreparedTarget, request: TokenRequest): Promise<string> {
  const res = await fetch(target.endpoints.token, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(request.client) },
    body: request.body,
  });
  const body = (await res.json()) as { access_token?: string };
  if (!res.ok || !body.access_token) throw new Error(`${target.name}: token request answered ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

/** Obtains `count` tokens, a few requests in flight at a time. */
export async function fetchTokens(target: PreparedTarget, request: TokenRequest, count: number): Promise<string[]> {
  const tokens: string[] = [];
  const lanes = 16;
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      for (let i = lane; i < count; i += lanes) tokens.push(await fetchToken(target, request));
    }),
  );
  return tokens;
}
