import type { AuthMethod } from '../client-auth.js';
import { OAuthError } from '../errors.js';
import { grantScopes, parseScope } from '../scopes.js';
import type { Grant } from './grant.js';

/**
 * client_credentials for machine users (ZITADEL semantics, compat §4.3): the machine user is the
 * client; the token format follows its accessTokenType; no ID token and no refresh token (seed).
 */
const NOT_FOR_CLIENT_CREDENTIALS: ReadonlySet<string> = new Set(['openid', 'offline_access']);
const SECRET_METHODS: ReadonlySet<AuthMethod> = new Set(['client_secret_basic', 'client_secret_post']);

export const clientCredentialsGrant: Grant = {
  type: 'client_credentials',
  clientPolicy: { methods: SECRET_METHODS, apps: true, machineUsers: true },
  async handle({ form, client, ctx }) {
    if (client?.kind !== 'machine') {
      throw new OAuthError('unauthorized_client', 'client_credentials is for machine users; this client is an application');
    }
    const { orgs, tokens } = ctx;
    const user = client.user;
    const org = orgs.requireOrg(user.orgId);
    const { scopes, audience } = grantScopes(
      parseScope(form.get('scope')),
      {
        resolveProject: (id) => (id === 'zitadel' ? ctx.instance.managementProjectId : orgs.getProject(id)?.id),
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
    const response: Record<string, unknown> = { access_token: issued.token, token_type: 'Bearer', expires_in: issued.expiresIn };
    if (scope) response.scope = scope;
    return response;
  },
};
