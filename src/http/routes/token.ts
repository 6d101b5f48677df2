import { PATHS } from '../../protocol/discovery.js';
import { OAuthError } from '../../protocol/errors.js';
import { GRANTS, type GrantsPorts } from '../../services/grants/index.js';
import type { Grant } from '../../services/grants/grant.js';
import { NeedsOwner } from '../../model/errors.js';
import { readClientRequest } from '../client-request.js';
import type { Ports } from '../../services/ports.js';
import { jsonNoStore } from '../responses.js';
import { countIssuedTokens } from '../../services/issued-token-counts.js';
import { grantLabel } from '../../observability/labels.js';
import type { Request, Route } from '../types.js';

/** What this module uses of the wired parts (src/app.ts); `P` is what the served grants use. */
export type TokenPorts<P = GrantsPorts> = Pick<Ports, 'clientAuth' | 'clients'> & P;

/**
 * POST /oauth/v2/token: parses the form, authenticates the client per grant, dispatches on
 * grant_type. `grants` are the grants served here: all of them on the main thread; on an HTTP
 * acceptor thread the ones it can decide alone, the others being handed to the main thread.
 */
export function tokenRoute<P = GrantsPorts>(ctx: TokenPorts<P>, grants: ReadonlyMap<string, Grant<P>> = GRANTS as ReadonlyMap<string, Grant<unknown>>): Route {
  const handle = async (req: Request) => {
    const { form, presented } = readClientRequest(req);
    const grantType = form.get('grant_type');
    if (grantType === undefined) throw new OAuthError('invalid_request', 'grant_type missing');
    const grant = grants.get(grantType);
    if (!grant) {
      if (GRANTS.has(grantType)) throw new NeedsOwner(`the ${grantType} grant`);
      throw new OAuthError('unsupported_grant_type', `${grantType} not supported`);
    }
    const client = grant.clientPolicy ? await ctx.clientAuth.authenticate(presented, grant.clientPolicy) : undefined;
    const answer = await grant.handle({ form, client, ctx });
    const label = grantLabel(grant.type);
    if (label) countIssuedTokens(label, answer);
    return jsonNoStore(200, answer);
  };
  return { pattern: PATHS.token, errorStyle: 'oauth', cors: (origin) => ctx.clients.originAllowed(origin), methods: { POST: handle } };
}
