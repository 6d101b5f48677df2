import type { AppContext } from '../http/context.js';
import type { Route } from '../http/types.js';

/** Provisioning API routes (ZITADEL management/admin v1 subset). */
export function managementRoutes(_ctx: AppContext): Route[] {
  return [];
}
