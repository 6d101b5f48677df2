import { ENDPOINT_AUTH_METHODS } from '../../protocol/client-auth-methods.js';
import { OAuthError } from '../../protocol/errors.js';
import { introspect } from '../../services/introspection.js';
import { PATHS } from '../../protocol/discovery.js';
import { readClientRequest } from '../client-request.js';
import type { FlowView } from '../../services/ports.js';
import { jsonNoStore } from '../responses.js';
import { recordIntrospection } from '../../observability/recorder.js';
import type { Request, Route } from '../types.js';
import type { IntrospectionPorts } from '../../services/introspection.js';
import { INTROSPECTION_JWT_MEDIA_TYPE, wantsIntrospectionJwt } from '../../protocol/introspection-jwt.js';

const SIGNED_HEADERS = { 'Content-Type': INTROSPECTION_JWT_MEDIA_TYPE, 'Cache-Control': 'no-store', Pragma: 'no-cache' };

/** What this module uses of the wired parts (src/app.ts). */
export type IntrospectPorts = Pick<FlowView, 'clientAuth' | 'clients' | 'config' | 'introspectionJwts'> & IntrospectionPorts;

/**
 * POST /oauth/v2/introspect (RFC 7662) for API apps and OIDC apps with a secret or a registered
 * key; a signed JWT answer (RFC 9701) for `Accept: application/token-introspection+jwt`, unless
 * SESAME_FEATURE_JWT_INTROSPECTION is off (then JSON, as the RFC lets a server answer).
 */
export function introspectRoute(ctx: IntrospectPorts): Route {
  const handle = async (req: Request) => {
    const { form, presented } = readClientRequest(req);
    const client = await ctx.clientAuth.authenticate(presented, {
      methods: ENDPOINT_AUTH_METHODS.introspection,
      endpoint: PATHS.introspection,
      apps: true,
      machineUsers: false,
    });
    if (client.kind !== 'app') throw new OAuthError('invalid_client', 'only applications may introspect');
    // RFC 7662 §2.1: `token` is REQUIRED; its absence is a malformed request, not an inactive token.
    const token = form.get('token');
    if (!token) throw new OAuthError('invalid_request', 'token is required');
    const response = await introspect(token, client.app, ctx);
    recordIntrospection(response.active === true);
    if (ctx.config.featureJwtIntrospection && wantsIntrospectionJwt(req.headers.accept)) {
      return { status: 200, headers: SIGNED_HEADERS, body: await ctx.introspectionJwts.sign(client.clientId, response) };
    }
    return jsonNoStore(200, response);
  };
  return { pattern: PATHS.introspection, errorStyle: 'oauth', cors: (origin) => ctx.clients.originAllowed(origin), methods: { POST: handle } };
}
