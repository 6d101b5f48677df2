import { ENDPOINT_AUTH_METHODS } from '../../protocol/client-auth-methods.js';
import { OAuthError } from '../../protocol/errors.js';
import { introspect } from '../../services/introspection.js';
import { PATHS } from '../../protocol/discovery.js';
import { readClientRequest } from '../client-request.js';
import type { Ports } from '../../services/ports.js';
import { jsonNoStore } from '../responses.js';
import { recordIntrospection } from '../../observability/recorder.js';
import type { Request, Route } from '../types.js';
import type { IntrospectionPorts } from '../../services/introspection.js';

/** What this module uses of the wired parts (src/app.ts). */
export type IntrospectPorts = Pick<Ports, 'clientAuth' | 'clients'> & IntrospectionPorts;

/** POST /oauth/v2/introspect (RFC 7662) for API apps and OIDC apps with a secret or a registered key. */
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
    const answer = introspect(token, client.app, ctx);
    recordIntrospection(answer.active === true);
    return jsonNoStore(200, answer);
  };
  return { pattern: PATHS.introspection, errorStyle: 'oauth', cors: (origin) => ctx.clients.originAllowed(origin), methods: { POST: handle } };
}
