import { managementRoutes } from '../admin/routes.js';
import type { AppContext } from '../../services/ports.js';
import type { Route } from '../types.js';
import { adminKeysRoute } from './admin-keys.js';
import { authorizeRoute } from './authorize.js';
import { endSessionRoute } from './end-session.js';
import { loginRoutes } from './login.js';
import { userinfoRoute } from './userinfo.js';
import { discoveryRoute } from './discovery.js';
import { healthRoutes } from './health.js';
import { introspectRoute } from './introspect.js';
import { keysRoute } from './keys.js';
import { revokeRoute } from './revoke.js';
import { tokenRoute } from './token.js';

/** Every route of the server, one module per endpoint. */
export function routes(ctx: AppContext): Route[] {
  return [
    ...healthRoutes(ctx),
    discoveryRoute(ctx),
    keysRoute(ctx),
    tokenRoute(ctx),
    introspectRoute(ctx),
    revokeRoute(ctx),
    adminKeysRoute(ctx),
    authorizeRoute(ctx),
    ...loginRoutes(ctx),
    userinfoRoute(ctx),
    endSessionRoute(ctx),
    ...managementRoutes(ctx),
  ];
}
