import { ENDPOINT_AUTH_METHODS } from '../../protocol/client-auth-methods.js';
import { PATHS } from '../../protocol/discovery.js';
import { startDeviceAuthorization, type DeviceFlowPorts } from '../../services/device-flow.js';
import { readClientRequest } from '../client-request.js';
import type { FlowView } from '../../services/ports.js';
import { jsonNoStore } from '../responses.js';
import type { Request, Route } from '../types.js';

/** What this module uses of the wired parts (src/app.ts). */
export type DeviceAuthorizationPorts = Pick<FlowView, 'clientAuth' | 'clients' | 'issuer'> & DeviceFlowPorts;

/**
 * POST /oauth/v2/device_authorization (RFC 8628 §3.1): the client authenticates as at the token
 * endpoint and gets a device code to poll with and a user code for the person.
 */
export function deviceAuthorizationRoute(ctx: DeviceAuthorizationPorts): Route {
  const handle = async (req: Request) => {
    const { form, presented } = readClientRequest(req);
    const client = await ctx.clientAuth.authenticate(presented, {
      methods: ENDPOINT_AUTH_METHODS.deviceAuthorization,
      endpoint: PATHS.deviceAuthorization,
      apps: true,
      machineUsers: false,
    });
    return jsonNoStore(200, await startDeviceAuthorization(ctx, client, form));
  };
  return { pattern: PATHS.deviceAuthorization, errorStyle: 'oauth', cors: (origin) => ctx.clients.originAllowed(origin), methods: { POST: handle } };
}
