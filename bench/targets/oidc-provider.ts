import type { ChildProcess } from 'node:child_process';
import { startReadyChild, stopChild } from './child.js';
import { fileURLToPath } from 'node:url';
import type { Alg } from '../args.js';
import { discoverEndpoints, type Client, type PreparedTarget, type SignInSetup, type TargetFactory } from './target.js';

/** Starts the oidc-provider peer once; it serves every algorithm through its resource indicators. */
const SCRIPT = fileURLToPath(new URL('./oidc-provider-server.js', import.meta.url));

export class OidcProviderFactory implements TargetFactory {
  readonly name = 'oidc-provider';
  private child: ChildProcess | undefined;
  private base: (Omit<PreparedTarget, 'ccJwt'> & { ccClient: { id: string; secret: string } }) | undefined;

  async open(alg: Alg): Promise<PreparedTarget> {
    if (!this.base) this.base = await this.start();
    const { ccClient, ...base } = this.base;
    return { ...base, ccJwt: { client: ccClient, body: `grant_type=client_credentials&scope=api&resource=${encodeURIComponent(`urn:bench:${alg}`)}` } };
  }

  private async start() {
    const { child, ready: info } = await startReadyChild<{ issuer: string; ccClient: Client; introspector: Client; webClient: Client; redirectUri: string }>(
      'oidc-provider',
      ['--no-warnings', SCRIPT],
      { NODE_ENV: 'production' },
    );
    this.child = child;
    const endpoints = await discoverEndpoints(info.issuer);
    if (!endpoints.authorization) throw new Error('oidc-provider: discovery has no authorization_endpoint');
    return {
      name: this.name,
      issuer: info.issuer,
      endpoints,
      pid: child.pid,
      ccClient: info.ccClient,
      ccOpaque: { client: info.ccClient, body: 'grant_type=client_credentials&scope=api' },
      introspector: info.introspector,
      signIn: await signIn(endpoints.authorization, info.webClient, info.redirectUri),
      notes: [
        'oidc-provider runs in memory (no persistence): its own adapter semantics on constant-time storage that evicts nothing (bench/targets/oidc-provider-adapter.ts); JWT access tokens are not introspectable there',
        "code-flow / refresh: oidc-provider keeps sessions, grants, codes and refresh tokens in its in-memory adapter, while Sesame commits each code and each refresh rotation to disk; both rotate the refresh token on every use and sign an RS256 ID token per token response; the person signed in once before the run (password hashing is outside the loop on both; the peer's dev login form checks no password)",
      ],
    };
  }

  async close(): Promise<void> {
    await stopChild(this.child);
  }
}

/**
 * Signs one person in through oidc-provider's development login form with plain fetch, as a
 * browser would: authorize → interaction page → login form POST → resume → redirect with a code,
 * following each redirect by hand and keeping the cookies. Returns the cookies a later
 * `prompt=none` authorize needs (the session's).
 */
export async function signIn(authorizationEndpoint: string, client: Client, redirectUri: string): Promise<SignInSetup> {
  const jar = new Map<string, string>();
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const keep = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expires = attributes.map((a) => a.trim()).find((a) => /^expires=/i.test(a));
      const gone = !value || (expires !== undefined && Date.parse(expires.slice(8)) <= Date.now()) || attributes.some((a) => /^\s*max-age=0\s*$/i.test(a));
      if (gone) jar.delete(name);
      else jar.set(name, value);
    }
  };
  const request = async (url: string, init: RequestInit = {}) => {
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie: cookie() } });
    keep(res);
    return res;
  };

  const authorize = new URL(authorizationEndpoint);
  authorize.search = new URLSearchParams({ client_id: client.id, redirect_uri: redirectUri, response_type: 'code', scope: 'openid offline_access' }).toString();
  let url = authorize.toString();
  let res = await request(url);
  // Follow redirects on the provider until the login form shows.
  for (let hops = 0; res.status >= 300 && res.status < 400 && hops < 5; hops++) {
    url = new URL(res.headers.get('location')!, url).toString();
    res = await request(url);
  }
  const html = await res.text();
  const action = /<form[^>]*action="([^"]+)"[^>]*method="post"/i.exec(html)?.[1];
  if (res.status !== 200 || !action) throw new Error(`oidc-provider sign-in: no login form at ${url} (${res.status})`);
  const form = new URLSearchParams();
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) form.set(name!, value!);
  form.set('login', 'bench-person');
  form.set('password', 'any');
  url = new URL(action.replaceAll('&amp;', '&'), url).toString();
  res = await request(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() });
  // Follow the provider's redirects (resume) until it sends the browser to the client with a code.
  for (let hops = 0; res.status >= 300 && res.status < 400 && hops < 5; hops++) {
    url = new URL(res.headers.get('location')!, url).toString();
    if (url.startsWith(redirectUri)) break;
    res = await request(url);
  }
  if (!url.startsWith(redirectUri) || !new URL(url).searchParams.get('code')) {
    throw new Error(`oidc-provider sign-in did not end with a code: ${res.status} ${url}`);
  }
  const session = [...jar].filter(([name]) => name.startsWith('_session'));
  if (!session.length) throw new Error(`oidc-provider sign-in left no session cookie (${[...jar.keys()].join(', ')})`);
  return { client, redirectUri, cookie: session.map(([k, v]) => `${k}=${v}`).join('; ') };
}
