import * as client from 'openid-client';
import type { IdentityProvidersReader } from '../../actors/identity-providers.js';
import type { IdentityProvider } from '../../model/records.js';
import { githubPrimaryEmail, identityOfClaims, microsoftTenantAllowed, type ExternalIdentity } from '../../domain/external-identity.js';
import { publicOnlyFetch } from './public-fetch.js';
import { isLoopbackHttp } from '../../protocol/authorize/redirect-uri.js';
import { clock } from '../../util/clock.js';
import type { View } from '../../util/readonly.js';

/**
 * The round trip to an OIDC or OAuth 2.0 identity provider, with openid-client (panva): the
 * authorization URL with `state`, a `nonce` (OIDC) and PKCE S256 (where the provider is set to use
 * it, and always for the presets that support it), and at the callback the code exchanged and the
 * ID token verified with every check openid-client does (signature against the provider's JWKS,
 * issuer, audience, expiry, nonce, `at_hash`), then the person's claims from the ID token or the
 * userinfo (OIDC) or user endpoint (OAuth). Microsoft's multi-tenant endpoints get their tenant's
 * issuer checked (domain/external-identity.ts). Discovery is cached per provider version for an hour.
 */
export interface UpstreamSecrets {
  state: string;
  nonce?: string | undefined;
  codeVerifier?: string | undefined;
}

export class UpstreamError extends Error {}

/** openid-client's wait for the provider, per request (seconds). */
const TIMEOUT_S = 10;
const DISCOVERY_TTL_MS = 3_600_000;

const isOidc = (p: View<IdentityProvider>) => p.issuer !== undefined;

export class Upstreams {
  private readonly configs = new Map<string, { at: number; config: Promise<client.Configuration> }>();

  constructor(
    private readonly idps: Pick<IdentityProvidersReader, 'clientSecret'>,
    /** Where providers send the browser back: `<issuer>/ui/login/login/externalidp/callback` (ZITADEL's, so existing registrations keep working). */
    readonly callbackUrl: string,
  ) {}

  /** `publicOnly`: an org's provider, reached over https at public addresses only (services/federation/public-fetch.ts). */
  private configOf(provider: View<IdentityProvider>, publicOnly: boolean): Promise<client.Configuration> {
    const key = `${provider.id}:${provider.sequence}:${publicOnly}`;
    const cached = this.configs.get(key);
    if (cached && clock.now() - cached.at < DISCOVERY_TTL_MS) return cached.config;
    // This provider's older configurations go, and every one past its time (a removed provider's too:
    // providers made and removed over and over do not pile up here).
    for (const [k, entry] of this.configs) if (k.startsWith(`${provider.id}:`) || clock.now() - entry.at >= DISCOVERY_TTL_MS) this.configs.delete(k);
    const config = this.newConfig(provider, publicOnly);
    this.configs.set(key, { at: clock.now(), config });
    config.catch(() => this.configs.delete(key));
    return config;
  }

  private async newConfig(provider: View<IdentityProvider>, publicOnly: boolean): Promise<client.Configuration> {
    const secret = this.idps.clientSecret(provider);
    // No secret (a provider imported from a bundle, which carries none): it signs nobody in until one is set.
    if (secret === undefined) throw new UpstreamError('the provider has no client secret yet');
    // OIDC providers: client_secret_basic (every OAuth server must take it, RFC 6749 §2.3.1); OAuth
    // ones (GitHub and the like) take the secret in the body.
    const auth = isOidc(provider) ? client.ClientSecretBasic(secret) : client.ClientSecretPost(secret);
    // http only to a provider on this machine, and only the instance's (an org's is reached at public addresses only).
    const insecure = (url: string) => (!publicOnly && isLoopbackHttp(url) ? [client.allowInsecureRequests] : []);
    const fetchOption = publicOnly ? { [client.customFetch]: publicOnlyFetch } : {};
    let config: client.Configuration;
    if (isOidc(provider)) {
      config = await client.discovery(new URL(provider.issuer!), provider.clientId, undefined, auth, { execute: insecure(provider.issuer!), timeout: TIMEOUT_S, ...fetchOption });
    } else {
      const server: client.ServerMetadata = {
        issuer: new URL(provider.authorizationEndpoint!).origin,
        authorization_endpoint: provider.authorizationEndpoint!,
        token_endpoint: provider.tokenEndpoint!,
        userinfo_endpoint: provider.userEndpoint!,
      };
      config = new client.Configuration(server, provider.clientId, undefined, auth);
      if (!publicOnly && (isLoopbackHttp(provider.tokenEndpoint!) || isLoopbackHttp(provider.authorizationEndpoint!))) client.allowInsecureRequests(config);
    }
    if (publicOnly) config[client.customFetch] = publicOnlyFetch as never;
    config.timeout = TIMEOUT_S;
    return config;
  }

  /** The URL that sends the browser to the provider, and what the callback must match. */
  async start(provider: View<IdentityProvider>, publicOnly: boolean, statePrefix: string): Promise<{ url: string; secrets: UpstreamSecrets }> {
    const config = await this.configOf(provider, publicOnly);
    // The prefix names the auth request the callback belongs to; the random part is what must match.
    const secrets: UpstreamSecrets = { state: statePrefix + client.randomState() };
    const params: Record<string, string> = { redirect_uri: this.callbackUrl, response_type: 'code', state: secrets.state };
    const scopes = provider.scopes.length > 0 ? [...provider.scopes] : isOidc(provider) ? ['openid', 'profile', 'email'] : [];
    if (isOidc(provider)) {
      if (!scopes.includes('openid')) scopes.unshift('openid');
      secrets.nonce = client.randomNonce();
      params.nonce = secrets.nonce;
    }
    if (provider.kind === 'github' || provider.kind === 'githubEnterprise') {
      // Its verified primary address is read from /user/emails, which needs this scope.
      if (!scopes.includes('user:email')) scopes.push('user:email');
    }
    if (scopes.length > 0) params.scope = scopes.join(' ');
    // PKCE where the provider is set to it, and wherever its discovery says it takes S256.
    if (provider.usePkce || config.serverMetadata().code_challenge_methods_supported?.includes('S256')) {
      secrets.codeVerifier = client.randomPKCECodeVerifier();
      params.code_challenge = await client.calculatePKCECodeChallenge(secrets.codeVerifier);
      params.code_challenge_method = 'S256';
    }
    return { url: client.buildAuthorizationUrl(config, params).href, secrets };
  }

  /** The callback: the code exchanged and checked; who the person is at the provider. Throws UpstreamError with the reason. */
  async finish(provider: View<IdentityProvider>, publicOnly: boolean, callback: URL, secrets: UpstreamSecrets): Promise<ExternalIdentity> {
    const config = await this.configOf(provider, publicOnly);
    let tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers;
    try {
      tokens = await client.authorizationCodeGrant(config, callback, {
        expectedState: secrets.state,
        ...(secrets.nonce ? { expectedNonce: secrets.nonce } : {}),
        ...(secrets.codeVerifier ? { pkceCodeVerifier: secrets.codeVerifier } : {}),
        idTokenExpected: isOidc(provider),
      });
    } catch (error) {
      throw new UpstreamError(describe(error));
    }
    let claims: Record<string, unknown>;
    if (isOidc(provider)) {
      const idToken = tokens.claims()!;
      // openid-client checked the issuer against Microsoft's discovery (its tenant, or the token's own on the multi-tenant endpoints).
      if (provider.kind === 'azure' && !microsoftTenantAllowed(provider.tenant ?? 'common', idToken.tid)) {
        throw new UpstreamError(`the account's tenant ${String(idToken.tid)} may not sign in through the provider's tenant ${provider.tenant}`);
      }
      claims = { ...idToken };
      if (!provider.isIdTokenMapping) {
        try {
          // The userinfo's subject must be the ID token's (openid-client checks it).
          Object.assign(claims, await client.fetchUserInfo(config, tokens.access_token, idToken.sub));
        } catch (error) {
          throw new UpstreamError(`userinfo: ${describe(error)}`);
        }
      }
    } else {
      claims = await this.userEndpoint(config, provider, tokens.access_token);
    }
    const identity = identityOfClaims(provider, claims);
    if (!identity) throw new UpstreamError(`the provider named no account (${isOidc(provider) ? 'sub' : provider.idAttribute})`);
    return identity;
  }

  private async userEndpoint(config: client.Configuration, provider: View<IdentityProvider>, accessToken: string): Promise<Record<string, unknown>> {
    const json = async (url: string) => {
      const res = await client.fetchProtectedResource(config, accessToken, new URL(url), 'GET', undefined, new Headers({ accept: 'application/json' }));
      if (!res.ok) throw new UpstreamError(`${url} answered ${res.status}`);
      return (await res.json()) as unknown;
    };
    const user = await json(provider.userEndpoint!).catch((error: unknown) => {
      throw error instanceof UpstreamError ? error : new UpstreamError(`user endpoint: ${describe(error)}`);
    });
    if (!user || typeof user !== 'object' || Array.isArray(user)) throw new UpstreamError('the user endpoint did not answer a JSON object');
    const claims = { ...(user as Record<string, unknown>) };
    // OAuth user endpoints vouch for no address; GitHub tells which of its addresses it verified.
    delete claims.email_verified;
    if (provider.kind === 'github' || provider.kind === 'githubEnterprise') {
      const primary = githubPrimaryEmail(await json(`${provider.userEndpoint!.replace(/\/$/, '')}/emails`).catch(() => undefined));
      if (primary) Object.assign(claims, { email: primary.email, email_verified: primary.verified });
      else delete claims.email;
    }
    return claims;
  }
}

function describe(error: unknown): string {
  if (error instanceof client.ResponseBodyError) return `${error.error}${error.error_description ? `: ${error.error_description}` : ''}`;
  if (error instanceof client.AuthorizationResponseError) return `${error.error}${error.error_description ? `: ${error.error_description}` : ''}`;
  if (error instanceof Error) return error.message;
  return String(error);
}
