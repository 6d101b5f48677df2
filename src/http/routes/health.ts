import type { Ports } from '../../services/ports.js';
import type { Route } from '../types.js';

/** What this module uses of the wired parts (src/app.ts). */
export type HealthPorts = Pick<Ports, 'isReady'>;

/** Liveness (the process serves HTTP) and readiness (storage, keys and workers are up). */
const HEADERS = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' };

export function healthRoutes(ctx: HealthPorts): Route[] {
  return [
    {
      pattern: '/healthz',
      errorStyle: 'api',
      methods: { GET: () => ({ status: 200, headers: HEADERS, body: '{"status":"ok"}' }) },
    },
    {
      pattern: '/readyz',
      errorStyle: 'api',
      methods: {
        GET: () => (ctx.isReady() ? { status: 200, headers: HEADERS, body: '{"status":"ready"}' } : { status: 503, headers: HEADERS, body: '{"status":"not ready"}' }),
      },
    },
  ];
}
