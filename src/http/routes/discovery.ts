import { discoveryDocument, PATHS } from '../../oauth/discovery.js';
import type { AppContext } from '../context.js';
import { precomputedJson } from '../responses.js';
import type { Route } from '../types.js';

/** GET /.well-known/openid-configuration: serialized once at start-up. */
export function discoveryRoute(ctx: AppContext): Route {
  const body = JSON.stringify(discoveryDocument(ctx.issuer, ctx.config.signingAlg));
  const headers = { 'Cache-Control': 'public, max-age=300', 'Access-Control-Allow-Origin': '*' };
  return {
    pattern: PATHS.discovery,
    errorStyle: 'oauth',
    methods: { GET: () => precomputedJson(200, body, headers) },
  };
}
