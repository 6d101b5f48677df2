import { healthRoutes } from '../http/routes/health.js';
import type { Route } from '../http/types.js';
import type { Ports } from '../services/ports.js';
import type { FollowedOnPostgres } from './followed-on-postgres.js';

/**
 * The routes of a thread on PostgreSQL, each answered only from copies that are current (see
 * FollowedOnPostgres.current: after a lost LISTEN connection a request waits for a look at the
 * database first), and so is the check before an upload. Health and readiness answer at once: they tell how the node is, not the directory.
 */
export function answeredFromCurrentCopies(table: Route[], followed: Pick<FollowedOnPostgres, 'current'>, ctx: Pick<Ports, 'isReady'>): Route[] {
  const health = new Set(healthRoutes(ctx).map((route) => route.pattern));
  return table.map((route) => {
    if (health.has(route.pattern)) return route;
    const methods: Route['methods'] = {};
    for (const [method, handler] of Object.entries(route.methods) as [keyof Route['methods'], NonNullable<Route['methods'][keyof Route['methods']]>][]) {
      methods[method] = (req) => {
        const wait = followed.current();
        return wait ? wait.then(() => handler(req)) : handler(req);
      };
    }
    // The check before an upload reads the copies too (a caller or setting changed a moment ago).
    const check = route.beforeBody;
    const beforeBody: Route['beforeBody'] =
      check &&
      ((req) => {
        const wait = followed.current();
        return wait ? wait.then(() => check(req)) : check(req);
      });
    return { ...route, methods, ...(beforeBody ? { beforeBody } : {}), current: () => followed.current() };
  });
}
