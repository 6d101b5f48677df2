import { discoveryDocument, PATHS } from '../../protocol/discovery.js';
import type { FlowView } from '../../services/ports.js';
import { precomputedJson } from '../responses.js';
import type { Route } from '../types.js';

/** What this module uses of the wired parts (src/app.ts). */
export type DiscoveryPorts = Pick<FlowView, 'config' | 'issuer' | 'settings'>;

/**
 * GET /.well-known/openid-configuration, and the same document at RFC 8414's
 * /.well-known/oauth-authorization-server (its fields are OAuth authorization server metadata, with
 * OpenID's besides): serialized once at start-up, in four variants, since the token exchange
 * feature and dynamic client registration can be switched at run time.
 */
export function discoveryRoutes(ctx: DiscoveryPorts): Route[] {
  const features = { par: ctx.config.featurePar, jwtIntrospection: ctx.config.featureJwtIntrospection, dpop: ctx.config.featureDpop };
  const variants = new Map<string, string>();
  for (const tokenExchange of [false, true]) {
    for (const registration of [false, true]) {
      variants.set(`${tokenExchange}/${registration}`, JSON.stringify(discoveryDocument(ctx.issuer, ctx.config.signingAlg, { ...features, tokenExchange, registration })));
    }
  }
  const headers = { 'Cache-Control': 'public, max-age=300' };
  const current = () => variants.get(`${ctx.settings.tokenExchangeEnabled()}/${ctx.settings.dynamicRegistrationEnabled()}`)!;
  const methods = { GET: () => precomputedJson(200, current(), headers) };
  return [PATHS.discovery, PATHS.authorizationServerMetadata].map((pattern) => ({ pattern, errorStyle: 'oauth' as const, cors: true, methods }));
}
