import { authenticateCaller, type Caller } from './caller.js';
import { json, jsonNoStore } from '../responses.js';
import type { Handler, Method, Request, Response, Route } from '../types.js';
import { omitZero } from '../../zitadel/json.js';
import type { CallerPorts } from './caller.js';

/** What this module uses of the wired parts (src/app.ts). */
export type EndpointPorts = CallerPorts;

/**
 * Building blocks shared by the provisioning routes: ZITADEL-style error bodies, 1 MiB bodies,
 * an authenticated caller for every handler, and protojson-like responses (zero values omitted).
 */
const MAX_BODY = 1024 * 1024;

export type CallerHandler = (req: Request, caller: Caller) => Response | Promise<Response>;

/** A route whose handlers all start by authenticating the caller (401 before anything else). */
export function apiRoute(ctx: EndpointPorts, pattern: string, methods: Partial<Record<Method, CallerHandler>>): Route {
  const wrapped: Partial<Record<Method, Handler>> = {};
  for (const [method, handler] of Object.entries(methods) as [Method, CallerHandler][]) {
    wrapped[method] = async (req) => handler(req, await authenticateCaller(ctx, req));
  }
  // The client's address: the activity log's record of where a change came from.
  return { pattern, methods: wrapped, errorStyle: 'api', maxBody: MAX_BODY, peerAddress: true };
}

/** HTTP 200 with the protojson shape of `body`. */
export function ok(body: object): Response {
  return json(200, omitZero(body));
}

/** HTTP 200 for a body that carries a secret, key or token: never cached. */
export function okSecret(body: object): Response {
  return jsonNoStore(200, omitZero(body));
}
