import { createHash, randomBytes } from 'node:crypto';
import { basicAuth, type PreparedTarget, type SignInSetup } from '../targets/target.js';
import { FORM, pathOf, type BenchRequest, type RequestPlan, type Scenario, type Skip } from './scenario.js';

/**
 * Browser sign-in throughput. The person signs in once (login form, cookie, CSRF) while the target
 * is prepared; the scenarios then measure what every later sign-in of a relying party costs:
 *
 * - `code-flow`: one iteration = `GET <authorization_endpoint>?prompt=none` with the user-agent
 *   cookie (session lookup, code stored) + `POST <token_endpoint>` with the code and PKCE verifier
 *   (code redemption, opaque access token stored, RS256 ID token signed; scope `openid`, so no
 *   refresh token). Two requests per sign-in: sign-ins/s = req/s ÷ 2.
 * - `refresh`: `POST <token_endpoint>` with `grant_type=refresh_token`, rotating 200 token families
 *   (each request: the old refresh token consumed, a new one and an opaque access token stored,
 *   RS256 ID token signed).
 *
 * Per target: Sesame commits each code and each refresh rotation to disk (lmdb) before answering;
 * oidc-provider (bench/targets/oidc-provider-server.ts) keeps sessions, grants, codes and tokens
 * in its default in-memory adapter, its person signed in through its dev login form
 * (devInteractions) and its grant for the client created without a consent screen. Password
 * hashing is outside the loop on both. Endpoints come from discovery, so the paths differ
 * (`/oauth/v2/authorize` vs `/auth`).
 *
 * Both chain responses into the next request, so they need --pipelining 1. The authorize request
 * answers with a redirect (Sesame 302, oidc-provider 303), which autocannon counts as non-2xx: for
 * code-flow, non-2xx ≈ req ÷ 2 is normal.
 */
const VERIFIER = randomBytes(32).toString('base64url');
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');

function authorizePath(target: PreparedTarget, setup: SignInSetup, scope: string): string {
  const url = new URL(target.endpoints.authorization!);
  url.search = new URLSearchParams({
    client_id: setup.client.id,
    redirect_uri: setup.redirectUri,
    response_type: 'code',
    scope,
    prompt: 'none',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
  }).toString();
  return pathOf(url.toString());
}

function codeOf(location: string | undefined): string | undefined {
  if (!location) return undefined;
  return new URL(location).searchParams.get('code') ?? undefined;
}

/** One silent sign-in and code exchange with fetch, as a relying party would do it. */
async function refreshTokenOf(target: PreparedTarget, setup: SignInSetup): Promise<string> {
  const origin = new URL(target.issuer).origin;
  const res = await fetch(origin + authorizePath(target, setup, 'openid offline_access'), { headers: { cookie: setup.cookie }, redirect: 'manual' });
  const code = codeOf(res.headers.get('location') ?? undefined);
  if (!code) throw new Error(`${target.name}: silent authorization failed (${res.status} ${res.headers.get('location')})`);
  const token = await fetch(target.endpoints.token, {
    method: 'POST',
    headers: { 'content-type': FORM, authorization: basicAuth(setup.client) },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: setup.redirectUri, code_verifier: VERIFIER }).toString(),
  });
  const body = (await token.json()) as { refresh_token?: string };
  if (!body.refresh_token) throw new Error(`${target.name}: code exchange gave no refresh token: ${JSON.stringify(body)}`);
  return body.refresh_token;
}

export const codeFlow: Scenario = {
  name: 'code-flow',
  alg: 'RS256',
  plan: async (target): Promise<RequestPlan | Skip> => {
    const setup = target.signIn;
    if (!setup || !target.endpoints.authorization) return { skip: 'no signed-in browser session' };
    const tokenBody = (code: string) => `grant_type=authorization_code&code=${encodeURIComponent(code)}&redirect_uri=${encodeURIComponent(setup.redirectUri)}&code_verifier=${VERIFIER}`;
    const requests: BenchRequest[] = [
      {
        method: 'GET',
        path: authorizePath(target, setup, 'openid'),
        headers: { cookie: setup.cookie },
        onResponse: (_status, _body, context, headers) => {
          context.code = codeOf(headers.location ?? headers.Location);
        },
      },
      {
        method: 'POST',
        path: pathOf(target.endpoints.token),
        headers: { 'content-type': FORM, authorization: basicAuth(setup.client) },
        setupRequest: (request, context) => {
          // Without a code (the authorization failed) the exchange fails too and counts as non-2xx.
          request.body = tokenBody((context!.code as string | undefined) ?? 'none');
          return request;
        },
      },
    ];
    return { requests };
  },
};

export const refresh: Scenario = {
  name: 'refresh',
  alg: 'RS256',
  plan: async (target): Promise<RequestPlan | Skip> => {
    const setup = target.signIn;
    if (!setup || !target.endpoints.authorization) return { skip: 'no signed-in browser session' };
    // autocannon resets a connection's context after every iteration, so the live tokens sit in a
    // shared queue: a request takes one, its response puts the rotated successor back. The queue
    // holds more families than there are connections; a failed request drops its family.
    const queue: string[] = [];
    for (let i = 0; i < 200; i++) queue.push(await refreshTokenOf(target, setup));
    const requests: BenchRequest[] = [
      {
        method: 'POST',
        path: pathOf(target.endpoints.token),
        headers: { 'content-type': FORM, authorization: basicAuth(setup.client) },
        setupRequest: (request) => {
          request.body = `grant_type=refresh_token&refresh_token=${encodeURIComponent(queue.shift() ?? 'exhausted')}`;
          return request;
        },
        onResponse: (status, body) => {
          if (status === 200) queue.push((JSON.parse(body) as { refresh_token: string }).refresh_token);
        },
      },
    ];
    return { requests };
  },
};
