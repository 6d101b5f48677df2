import { SECRET_AUTH_METHODS } from '../../protocol/client-auth-methods.js';
import { PATHS } from '../../protocol/discovery.js';
import { OAuthError } from '../../protocol/errors.js';
import type { Grant } from './grant.js';
import { machineUserTokens } from './machine-token.js';
import type { MachineTokenPorts } from './machine-token.js';

/** What this grant uses of the wired parts (src/app.ts). */
export type ClientCredentialsPorts = MachineTokenPorts;

/**
 * client_credentials for machine users (ZITADEL semantics, docs/compatibility.md §4.3): the
 * machine user is the client; no ID token (unlike ZITADEL) and no refresh token. `openid` stays in
 * the granted scope (as in ZITADEL) although no ID token is returned here: a later token exchange
 * of this token with `scope=openid` may then return one.
 */
const NOT_FOR_CLIENT_CREDENTIALS: ReadonlySet<string> = new Set(['offline_access']);

export const clientCredentialsGrant: Grant<ClientCredentialsPorts> = {
  type: 'client_credentials',
  label: 'client_credentials',
  clientPolicy: { methods: SECRET_AUTH_METHODS, endpoint: PATHS.token, apps: true, machineUsers: true },
  async handle({ form, client, ctx, dpop }) {
    if (client?.kind !== 'machine') {
      throw new OAuthError('unauthorized_client', 'client_credentials is for machine users; this client is an application');
    }
    return machineUserTokens(ctx, client.user, client.clientId, form.get('scope'), {
      dropScopes: NOT_FOR_CLIENT_CREDENTIALS,
      idToken: false,
      resources: form.all('resource'),
      dpop,
    });
  },
};
