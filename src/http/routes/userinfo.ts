import { bearerToken, challenge, dpopToken } from '../../protocol/bearer.js';
import { PATHS } from '../../protocol/discovery.js';
import { OAuthError } from '../../protocol/errors.js';
import { parseFormBody } from '../../protocol/form.js';
import { claimsFor } from '../../services/user-tokens.js';
import type { FlowView } from '../../services/ports.js';
import { jsonNoStore } from '../responses.js';
import type { Request, Route } from '../types.js';
import type { UserTokensPorts } from '../../services/user-tokens.js';
import type { AccessTokenClaims } from '../../actors/issued-tokens.js';
import type { DpopProofs } from '../../services/dpop-proofs.js';

/** What this module uses of the wired parts (src/app.ts). */
export type UserinfoPorts = Pick<FlowView, 'clients' | 'orgs' | 'accessTokens' | 'dpopProofs'> & UserTokensPorts;

/**
 * GET|POST /oidc/v1/userinfo (OIDC Core §5.3, RFC 6750, RFC 9449 §7): claims of the token's user
 * per granted scope. A missing token is 401 with a bare Bearer challenge (and a DPoP one while
 * DPoP is on); an invalid, expired or revoked one (or one whose user is gone) 401 with
 * `error="invalid_token"`. A DPoP-bound token is taken only as `Authorization: DPoP` with a proof
 * of its key naming it (`ath`); its errors carry a DPoP challenge.
 */
const REALM = 'sesame';

function invalidToken(description: string): OAuthError {
  return new OAuthError('invalid_token', description, {
    status: 401,
    headers: { 'WWW-Authenticate': challenge('Bearer', { realm: REALM, error: 'invalid_token', error_description: description }) },
  });
}

export function userinfoRoute(ctx: UserinfoPorts): Route {
  const dpop = ctx.dpopProofs;
  const algs = dpop?.algs.join(' ');
  const bearer = challenge('Bearer', { realm: REALM });
  const missing = dpop ? `${bearer}, ${challenge('DPoP', { algs })}` : bearer;
  /**
   * A refusal under the DPoP scheme (RFC 9449 §7.1): 401 with a DPoP challenge naming the error and
   * the algorithms; `challengeText` when the challenge says less than the error's description.
   */
  const dpopRefusal = (error: OAuthError['error'], description: string, headers?: Record<string, string>, challengeText = description) =>
    new OAuthError(error, description, { status: 401, headers: { ...headers, 'WWW-Authenticate': challenge('DPoP', { error, error_description: challengeText, algs }) } });

  const answer = (claims: AccessTokenClaims, headers?: Record<string, string>) => {
    const user = ctx.orgs.getUser(claims.sub);
    if (!ctx.orgs.isActive(user)) throw invalidToken('no active user');
    const scopes = claims.scope ? claims.scope.split(' ') : [];
    const app = ctx.clients.appByClient(claims.clientId);
    const userClaims = claimsFor(ctx, user, scopes, app?.projectId, true);
    return jsonNoStore(200, { ...userClaims, sub: user.id, ...(claims.act ? { act: claims.act } : {}) }, headers);
  };

  /** `Authorization: DPoP`: the proof must be valid, name the token (`ath`) and be signed with the key it is bound to. */
  const withProof = async (req: Request, token: string, claims: AccessTokenClaims, proofs: DpopProofs) => {
    const bound = claims.cnf?.jkt;
    if (bound === undefined) throw dpopRefusal('invalid_token', 'access token is not DPoP-bound: present it as Bearer');
    const proof = req.headers.dpop;
    if (proof === undefined) throw dpopRefusal('invalid_dpop_proof', 'DPoP proof missing');
    let key: string;
    try {
      key = (await proofs.verify({ proof, repeated: req.repeatedHeaders.has('dpop'), method: req.method, path: PATHS.userinfo, accessToken: token })).jkt;
    } catch (error) {
      if (error instanceof OAuthError) throw dpopRefusal(error.error, error.description, error.headers);
      throw error;
    }
    if (key !== bound) throw dpopRefusal('invalid_dpop_proof', 'DPoP proof is not signed with the key the access token is bound to');
    return answer(claims, proofs.nonceHeaders());
  };

  // The token is read from the store (opaque tokens and every revocation), a DPoP proof checked besides.
  const handle = async (req: Request) => {
    if (req.repeatedHeaders.has('authorization')) throw new OAuthError('invalid_request', 'Authorization header is repeated');
    const header = req.headers.authorization;
    let token: string | undefined;
    let dpopScheme = false;
    if (header !== undefined) {
      token = bearerToken(header);
      if (token === undefined && dpop) {
        token = dpopToken(header);
        dpopScheme = token !== undefined;
      }
      if (token === undefined) throw invalidToken('malformed Authorization header');
    }
    // RFC 6750 §2.2: a form body parameter is the other way to send it (only one may be used).
    if (req.method === 'POST' && req.body.length > 0) {
      const bodyToken = parseFormBody(req.headers['content-type'], req.body).get('access_token');
      if (bodyToken !== undefined && token !== undefined) throw new OAuthError('invalid_request', 'access token sent twice');
      token ??= bodyToken;
    }
    if (token === undefined) {
      throw new OAuthError('invalid_request', 'access token missing', { status: 401, headers: { 'WWW-Authenticate': missing } });
    }
    const resolved = await ctx.accessTokens.resolve(token);
    if (dpopScheme) {
      if (!resolved) throw dpopRefusal('invalid_token', 'access token invalid, expired or revoked');
      return withProof(req, token, resolved.claims, dpop!);
    }
    if (!resolved) throw invalidToken('access token invalid, expired or revoked');
    if (resolved.claims.cnf) {
      // RFC 9449 §7.2: a bound token is no bearer token, whoever holds it (also once DPoP is off).
      throw dpopRefusal('invalid_token', 'access token is DPoP-bound: present it with Authorization: DPoP and a proof', undefined, 'access token is DPoP-bound');
    }
    return answer(resolved.claims);
  };
  return { pattern: PATHS.userinfo, errorStyle: 'oauth', cors: (origin) => ctx.clients.originAllowed(origin), methods: { GET: handle, POST: handle } };
}
