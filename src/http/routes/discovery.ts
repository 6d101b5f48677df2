import { discoveryDocument, PATHS } from '../../protocol/discovery.js';
import type { Ports } from '../../services/ports.js';
import { precomputedJson } from '../responses.js';
import type { Route } from '../types.js';

/** What this module uses of the wired parts (src/app.ts). */
export type DiscoveryPorts = Pick<Ports, 'config' | 'issuer' | 'settings'>;

/**
 * GET /.well-known/openid-configuration: serialized once at start-up, in two variants, since the
 * token exchange feature can be switched at run time.
 */
export function discoveryRoute(ctx: DiscoveryPorts): Route {
  const features = { par: ctx.config.featurePar, jwtIntrospection: ctx.config.featureJwtIntrospection, dpop: ctx.config.featureDpop };
  const without = JSON.stringify(discoveryDocument(ctx.issuer, ctx.config.signingAlg, { ...features, tokenExchange: false }));
  const withExchange = JSON.stringify(discoveryDocument(ctx.issuer, ctx.config.signingAlg, { ...features, tokenExchange: true }));
  const headers = { 'Cache-Control': 'public, max-age=300' };
  return {
    pattern: PATHS.discovery,
    errorStyle: 'oauth',
    cors: true,
    methods: { GET: () => precomputedJson(200, ctx.settings.tokenExchangeEnabled() ? withExchange : without, headers) },
  };
}
