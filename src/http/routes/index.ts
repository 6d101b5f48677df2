import { managementRoutes, type ManagementRoutesPorts } from '../admin/routes.js';
import type { Route } from '../types.js';
import { authorizeRoute } from './authorize.js';
import { endSessionRoute } from './end-session.js';
import { deviceAuthorizationRoute, type DeviceAuthorizationPorts } from './device-authorization.js';
import { devicePageRoutes, type DevicePagePorts } from './device.js';
import { parRoute, type ParPorts } from './par.js';
import { registrationRoutes, type RegisterPorts } from './register.js';
import { loginRoutes } from './login.js';
import { userinfoRoute } from './userinfo.js';
import { discoveryRoutes } from './discovery.js';
import { healthRoutes } from './health.js';
import { introspectRoute } from './introspect.js';
import { keysRoute } from './keys.js';
import { revokeRoute } from './revoke.js';
import { tokenRoute } from './token.js';
import type { UserinfoPorts } from './userinfo.js';
import type { EndSessionPorts } from './end-session.js';
import type { KeysPorts } from './keys.js';
import type { TokenPorts } from './token.js';
import type { LoginPorts } from './login.js';
import type { AuthorizePorts } from './authorize.js';
import type { IntrospectPorts } from './introspect.js';
import type { DiscoveryPorts } from './discovery.js';
import type { HealthPorts } from './health.js';
import type { RevokePorts } from './revoke.js';
import { consoleRoutes, type ConsolePorts } from '../console/routes.js';

/** What this module uses of the wired parts (src/app.ts). */
export type RoutesPorts = UserinfoPorts &
  EndSessionPorts &
  KeysPorts &
  TokenPorts &
  LoginPorts &
  AuthorizePorts &
  IntrospectPorts &
  DiscoveryPorts &
  HealthPorts &
  RevokePorts &
  ManagementRoutesPorts &
  DeviceAuthorizationPorts &
  DevicePagePorts &
  ParPorts &
  RegisterPorts &
  ConsolePorts;

/** Every route of the server, one module per endpoint: the one list every HTTP thread mounts from. */
export function routes(ctx: RoutesPorts): Route[] {
  const token = tokenRoute(ctx);
  const keys = keysRoute(ctx);
  const management = managementRoutes(ctx);
  return [
    ...healthRoutes(ctx),
    ...discoveryRoutes(ctx),
    keys,
    token,
    introspectRoute(ctx),
    revokeRoute(ctx),
    authorizeRoute(ctx),
    // Off (SESAME_FEATURE_PAR=false): not mounted, and not in discovery.
    ...(ctx.config.featurePar ? [parRoute(ctx)] : []),
    // Mounted always, answering 404 while the dynamic client registration setting is off.
    ...registrationRoutes(ctx),
    deviceAuthorizationRoute(ctx),
    ...devicePageRoutes(ctx),
    ...loginRoutes(ctx),
    userinfoRoute(ctx),
    endSessionRoute(ctx),
    ...management,
    // The admin console acts through the APIs' own routes, in this thread.
    ...consoleRoutes(ctx, [...management, token, keys]),
  ];
}
