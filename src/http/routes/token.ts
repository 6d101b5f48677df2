import { PATHS } from '../../protocol/discovery.js';
import { OAuthError } from '../../protocol/errors.js';
import { GRANTS, type GrantsPorts } from '../../services/grants/index.js';
import { readClientRequest } from '../client-request.js';
import type { Ports } from '../../services/ports.js';
import { jsonNoStore } from '../responses.js';
import type { Request, Route } from '../types.js';

/** What this module uses of the wired parts (src/app.ts). */
export type TokenPorts = Pick<Ports, 'clientAuth' | 'clients'> & GrantsPorts;

/** POST /oauth/v2/token: parses the form, authenticates the client per grant, dispatches on grant_type. */
export function tokenRoute(ctx: TokenPorts): Route {
  const handle = async (req: Request) => {
    const { form, presented } = readClientRequest(req);
    const grantType = form.get('grant_type');
    if (grantType === undefined) throw new OAuthError('invalid_request', 'grant_type missing');
    const grant = GRANTS.get(grantType);
    if (!grant) throw new OAuthError('unsupported_grant_type', `${grantType} not supported`);
    const client = grant.clientPolicy ? await ctx.clientAuth.authenticate(presented, grant.clientPolicy) : undefined;
    return jsonNoStore(200, await grant.handle({ form, client, ctx }));
  };
  return { pattern: PATHS.token, errorStyle: 'oauth', cors: (origin) => ctx.clients.originAllowed(origin), methods: { POST: handle } };
}
