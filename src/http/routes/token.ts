import { PATHS } from '../../protocol/discovery.js';
import { OAuthError } from '../../protocol/errors.js';
import { GRANTS, type GrantsPorts } from '../../services/grants/index.js';
import type { Grant } from '../../services/grants/grant.js';
import type { DpopKey } from '../../protocol/dpop.js';
import { NeedsOwner } from '../../model/errors.js';
import { readClientRequest } from '../client-request.js';
import type { FlowView } from '../../services/ports.js';
import { jsonNoStore } from '../responses.js';
import { countIssuedTokens } from '../../services/issued-token-counts.js';
import type { Request, Route } from '../types.js';

/** What this module uses of the wired parts (src/app.ts); `P` is what the served grants use. */
export type TokenPorts<P = GrantsPorts> = Pick<FlowView, 'clientAuth' | 'clients' | 'dpopProofs'> & P;

/**
 * An app registered with `dpopBoundAccessTokens` gets tokens only with a proof (RFC 9449 §5.2);
 * with DPoP off on this server it gets none, rather than tokens it asked never to be given unbound.
 */
function dpopRequired(dpopOn: boolean): OAuthError {
  return dpopOn
    ? new OAuthError('invalid_dpop_proof', 'this client requires DPoP-bound tokens: send a DPoP proof')
    : new OAuthError('invalid_request', 'this client requires DPoP-bound tokens, and DPoP is turned off on this server (SESAME_FEATURE_DPOP=false)');
}

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
    // One header lookup for requests without DPoP; a proof is checked after the client is known
    // (no proof work for strangers) and is spent before any token is issued.
    const proof = req.headers.dpop;
    let dpop: DpopKey | undefined;
    if (proof !== undefined && ctx.dpopProofs) {
      dpop = await ctx.dpopProofs.verify({ proof, repeated: req.repeatedHeaders.has('dpop'), method: req.method, path: PATHS.token });
    } else if (client?.kind === 'app' && client.app.oidc?.dpopBoundAccessTokens) {
      throw dpopRequired(ctx.dpopProofs !== undefined);
    }
    const answer = await grant.handle({ form, client, ctx, dpop });
    countIssuedTokens(grant.label, answer);
    return jsonNoStore(200, answer, dpop && ctx.dpopProofs?.nonceHeaders());
  };
  return { pattern: PATHS.token, errorStyle: 'oauth', cors: (origin) => ctx.clients.originAllowed(origin), methods: { POST: handle } };
}
