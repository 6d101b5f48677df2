import { authenticateCaller } from '../admin/caller.js';
import type { Ports } from '../../services/ports.js';
import { json } from '../responses.js';
import type { Route } from '../types.js';
import type { CallerPorts } from '../admin/caller.js';

/** What this module uses of the wired parts (src/app.ts). */
export type AdminKeysPorts = Pick<Ports, 'keys'> & CallerPorts;

/** POST /admin/v1/keys/_rotate: on-demand signing key rotation (IAM_OWNER). */
export function adminKeysRoute(ctx: AdminKeysPorts): Route {
  return {
    pattern: '/admin/v1/keys/_rotate',
    errorStyle: 'api',
    methods: {
      POST: async (req) => {
        authenticateCaller(ctx, req).require('iam.write', {});
        const { kid } = await ctx.keys.rotate();
        return json(200, { kid, details: { changeDate: new Date().toISOString() } });
      },
    },
  };
}
