import { presentedClient } from '../../oauth/client-credentials.js';
import type { AuthMethod } from '../../oauth/client-auth.js';
import { OAuthError } from '../../oauth/errors.js';
import { parseFormBody } from '../../oauth/form.js';
import { clientCredentialsGrant } from '../../oauth/grants/client-credentials.js';
import { PATHS } from '../../oauth/discovery.js';
import type { AppContext } from '../context.js';
import { jsonNoStore } from '../responses.js';
import type { Request, Route } from '../types.js';

/** POST /oauth/v2/token: dispatches on grant_type. */
const SECRET_METHODS: ReadonlySet<AuthMethod> = new Set(['client_secret_basic', 'client_secret_post']);
const KNOWN_LATER = new Set([
  'authorization_code',
  'refresh_token',
  'urn:ietf:params:oauth:grant-type:jwt-bearer',
  'urn:ietf:params:oauth:grant-type:token-exchange',
]);

export function tokenRoute(ctx: AppContext): Route {
  const handle = async (req: Request) => {
    if (req.repeatedHeaders.has('authorization')) throw new OAuthError('invalid_request', 'Authorization header is repeated');
    const form = parseFormBody(req.headers['content-type'], req.body);
    const grantType = form.get('grant_type');
    if (grantType === undefined) throw new OAuthError('invalid_request', 'grant_type missing');
    const presented = presentedClient(req.headers.authorization, form);
    switch (grantType) {
      case 'client_credentials': {
        const client = ctx.clientAuth.authenticate(presented, { methods: SECRET_METHODS, apps: true, machineUsers: true });
        return jsonNoStore(200, await clientCredentialsGrant(form, client, ctx.orgs, ctx.tokens, ctx.instance.managementProjectId));
      }
      default:
        throw new OAuthError(
          'unsupported_grant_type',
          KNOWN_LATER.has(grantType) ? `${grantType} is not enabled on this server yet` : `${grantType} not supported`,
        );
    }
  };
  return { pattern: PATHS.token, errorStyle: 'oauth', methods: { POST: handle } };
}
