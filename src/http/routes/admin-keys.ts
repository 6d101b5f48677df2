import { authenticateCaller } from '../admin/caller.js';
import type { AppContext } from '../../services/ports.js';
import { json } from '../responses.js';
import type { Route } from '../types.js';

/** POST /admin/v1/keys/_rotate: on-demand signing key rotation (IAM_OWNER). */
export function adminKeysRoute(ctx: AppContext): Route {
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
