import { JWKS_MAX_AGE_SECONDS } from '../../actors/keys.js';
import { PATHS } from '../../protocol/discovery.js';
import type { FlowView } from '../../services/ports.js';
import type { Route } from '../types.js';

/** What this module uses of the wired parts (src/app.ts). */
export type KeysPorts = Pick<FlowView, 'keys'>;

/** GET /oauth/v2/keys: the JWKS the keys actor keeps serialized. */
const HEADERS = Object.freeze({
  'Content-Type': 'application/json',
  'Cache-Control': `public, max-age=${JWKS_MAX_AGE_SECONDS}, must-revalidate`,
});

export function keysRoute(ctx: KeysPorts): Route {
  return {
    pattern: PATHS.jwks,
    errorStyle: 'oauth',
    cors: true,
    methods: { GET: () => ({ status: 200, headers: HEADERS, body: ctx.keys.jwks() }) },
  };
}
