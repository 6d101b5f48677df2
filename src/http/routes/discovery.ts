import { discoveryDocument, PATHS } from '../../protocol/discovery.js';
import type { Ports } from '../../services/ports.js';
import { precomputedJson } from '../responses.js';
import type { Route } from '../types.js';

/** What this module uses of the wired parts (src/app.ts). */
export type DiscoveryPorts = Pick<Ports, 'config' | 'issuer' | 'settings'>;

/**
 * GET /.well-known/openid-configuration: serialized once at start-up, in four variants, since the
 * token exchange feature and dynamic client registration can be switched at run time.
 */
export function discoveryRoute(ctx: DiscoveryPorts): Route {
  const features = { par: ctx.config.featurePar, jwtIntrospection: ctx.config.featureJwtIntrospection, dpop: ctx.config.featureDpop };
  const variants = new Map<string, string>();
  for (const tokenExchange of [false, true]) {
    for (const registration of [false, true]) {
      variants.set(`${tokenExchange}/${registration}`, JSON.stringify(discoveryDocument(ctx.issuer, ctx.config.signingAlg, { ...features, tokenExchange, registration })));
    }
  }
  const headers = { 'Cache-Control': 'public, max-age=300' };
  const current = () => variants.get(`${ctx.settings.tokenExchangeEnabled()}/${ctx.settings.dynamicRegistrationEnabled()}`)!;
  return {
    pattern: PATHS.discovery,
    errorStyle: 'oauth',
    cors: true,
    methods: { GET: () => precomputedJson(200, current(), headers) },
  };
}
