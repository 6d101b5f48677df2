import { ENDPOINT_AUTH_METHODS } from '../../protocol/client-auth-methods.js';
import { validateAuthorizeRequest } from '../../protocol/authorize/validate.js';
import { PATHS } from '../../protocol/discovery.js';
import { OAuthError } from '../../protocol/errors.js';
import { clock } from '../../util/clock.js';
import { readClientRequest } from '../client-request.js';
import type { FlowView } from '../../services/ports.js';
import { jsonNoStore } from '../responses.js';
import type { Request, Route } from '../types.js';
import { authorizeDirectory } from '../../services/authorize-directory.js';

/** What this module uses of the wired parts (src/app.ts). */
export type ParPorts = Pick<FlowView, 'clientAuth' | 'clients' | 'config' | 'dpopProofs' | 'instance' | 'orgs' | 'pushedRequests'>;

/** Client authentication parameters: they authenticate the push and are not part of the authorization request. */
const CLIENT_AUTH_PARAMS = new Set(['client_secret', 'client_assertion', 'client_assertion_type']);

/**
 * POST /oauth/v2/par (RFC 9126): an OIDC app pushes its authorization request, authenticated as
 * at the token endpoint; it is validated now as the authorization endpoint would (errors answered
 * here as JSON), stored for 60 seconds, and the app sends the browser to the authorization
 * endpoint with `client_id` and the `request_uri` it got back (used once).
 */
export function parRoute(ctx: ParPorts): Route {
  const directory = authorizeDirectory(ctx);
  const handle = async (req: Request) => {
    const { form, presented } = readClientRequest(req);
    const client = await ctx.clientAuth.authenticate(presented, { methods: ENDPOINT_AUTH_METHODS.par, endpoint: PATHS.par, apps: true, machineUsers: false });
    if (client.kind !== 'app' || !client.app.oidc) throw new OAuthError('unauthorized_client', 'pushed authorization requests are for OIDC applications');
    if (form.has('request_uri')) throw new OAuthError('invalid_request', 'request_uri must not be pushed (RFC 9126 §2.1)');
    const params = new Map<string, string[]>();
    for (const name of form.keys()) if (!CLIENT_AUTH_PARAMS.has(name)) params.set(name, [...form.all(name)]);
    params.set('client_id', [client.clientId]);
    // RFC 9449 §10.1: a DPoP proof at the push binds the code to its key, as `dpop_jkt` would (both: they must agree).
    const proof = req.headers.dpop;
    if (proof !== undefined && ctx.dpopProofs) {
      const { jkt } = await ctx.dpopProofs.verify({ proof, repeated: req.repeatedHeaders.has('dpop'), method: req.method, path: PATHS.par });
      const named = params.get('dpop_jkt')?.[0];
      if (named !== undefined && named !== jkt) throw new OAuthError('invalid_dpop_proof', "dpop_jkt is not the thumbprint of the DPoP proof's key");
      params.set('dpop_jkt', [jkt]);
    }
    const validation = validateAuthorizeRequest(params, directory, { pushed: true, dpop: ctx.dpopProofs !== undefined });
    if (validation.kind === 'page') throw new OAuthError('invalid_request', validation.description);
    if (validation.kind === 'redirect-error') throw new OAuthError(validation.error, validation.description);
    const now = clock.now();
    const pushed = await ctx.pushedRequests.push(client.clientId, params, now);
    return jsonNoStore(201, { request_uri: pushed.requestUri, expires_in: Math.round((pushed.expiresAt - now) / 1000) });
  };
  return { pattern: PATHS.par, errorStyle: 'oauth', cors: (origin) => ctx.clients.originAllowed(origin), methods: { POST: handle } };
}
