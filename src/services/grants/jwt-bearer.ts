import { log } from '../../util/log.js';
import { OAuthError } from '../../protocol/errors.js';
import type { Grant } from './grant.js';
import { machineUserTokens } from './machine-token.js';
import type { FlowView } from '../ports.js';
import type { MachineTokenPorts } from './machine-token.js';

/** What this grant uses of the wired parts (src/app.ts). */
export type JwtBearerPorts = Pick<FlowView, 'assertions' | 'orgs'> & MachineTokenPorts;

/**
 * JWT profile grant (RFC 7523 §2.1) for machine users with machine keys, as ZITADEL's key files
 * and client libraries use it: the signed `assertion` is the authentication; `openid` adds an
 * ID token of the service user; no refresh token.
 */
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const NO_REFRESH: ReadonlySet<string> = new Set(['offline_access']);

export const jwtBearerGrant: Grant<JwtBearerPorts> = {
  type: JWT_BEARER,
  label: 'jwt_bearer',
  clientPolicy: undefined,
  async handle({ form, ctx, dpop }) {
    const assertion = form.get('assertion');
    if (assertion === undefined) throw new OAuthError('invalid_request', 'assertion missing');
    const user = await ctx.assertions.verifyJwtProfile(assertion, (description, detail) => {
      log.warn('jwt profile assertion refused', { reason: detail ?? description });
      return new OAuthError('invalid_grant', description);
    });
    return machineUserTokens(ctx, user, ctx.orgs.preferredLoginName(user), form.get('scope'), { dropScopes: NO_REFRESH, idToken: true, resources: form.all('resource'), dpop });
  },
};
