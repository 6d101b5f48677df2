import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';
import { rfc3339 } from '../../zitadel/details.js';
import { clock } from '../../util/clock.js';
import { apiRoute, ok, type EndpointPorts } from './endpoint.js';

/** What this module uses of the wired parts (src/app.ts). */
export type SigningKeysPorts = Pick<Ports, 'keys'> & EndpointPorts;

/** POST /admin/v1/keys/_rotate: on-demand signing key rotation (IAM_OWNER). */
export function signingKeyRoutes(ctx: SigningKeysPorts): Route[] {
  return [
    apiRoute(ctx, '/admin/v1/keys/_rotate', {
      POST: async (_req, caller) => {
        caller.require('iam.write', {});
        const { kid } = await ctx.keys.rotate(false, caller.by);
        return ok({ kid, details: { changeDate: rfc3339(clock.now()) } });
      },
    }),
  ];
}
