import type { OrgsActor } from '../../actors/orgs.js';
import type { AccessTokens } from '../access-tokens.js';
import type { AuthenticatedClient } from '../client-auth.js';
import { OAuthError } from '../errors.js';
import type { Form } from '../form.js';
import { grantScopes, parseScope } from '../scopes.js';

/**
 * client_credentials for machine users (ZITADEL semantics, compat §4.3): the machine user is the
 * client; the token format follows its accessTokenType; no ID token and no refresh token (seed).
 */
const NOT_FOR_CLIENT_CREDENTIALS = new Set(['openid', 'offline_access']);

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope?: string;
}

export async function clientCredentialsGrant(
  form: Form,
  client: AuthenticatedClient,
  orgs: OrgsActor,
  tokens: AccessTokens,
  managementProjectId: string,
): Promise<TokenResponse> {
  if (client.kind !== 'machine') {
    throw new OAuthError('unauthorized_client', 'client_credentials is for machine users; this client is an application');
  }
  const user = client.user;
  const org = orgs.requireOrg(user.orgId);
  const { scopes, audience } = grantScopes(
    parseScope(form.get('scope')),
    {
      resolveProject: (id) => (id === 'zitadel' ? managementProjectId : orgs.getProject(id)?.id),
      subjectOrg: { id: org.id, domains: org.domains.map((d) => d.domainName) },
    },
    NOT_FOR_CLIENT_CREDENTIALS,
  );
  const scope = scopes.join(' ');
  const issued = await tokens.issue(user.machine!.accessTokenType === 'ACCESS_TOKEN_TYPE_JWT' ? 'jwt' : 'opaque', {
    sub: user.id,
    clientId: client.clientId,
    aud: audience.length > 0 ? audience : [client.clientId],
    scope,
  });
  const response: TokenResponse = { access_token: issued.token, token_type: 'Bearer', expires_in: issued.expiresIn };
  if (scope) response.scope = scope;
  return response;
}
