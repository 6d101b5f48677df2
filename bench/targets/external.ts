import type { BenchOptions } from '../args.js';
import { discoverEndpoints, type PreparedTarget, type TargetFactory } from './target.js';

/**
 * An already running provider (`--target <issuer>`): Sesame elsewhere, ZITADEL, Keycloak, ... The
 * client_credentials client and the introspecting client come from flags or environment variables.
 * The token format is whatever that client is configured for, so it runs as both cc scenarios.
 */
export class ExternalFactory implements TargetFactory {
  readonly name = 'target';
  private prepared: PreparedTarget | undefined;

  constructor(private readonly options: BenchOptions & { target: string; clientId: string; clientSecret: string }) {}

  async open(): Promise<PreparedTarget> {
    if (this.prepared) return this.prepared;
    const o = this.options;
    const body = `grant_type=client_credentials${o.scope ? `&scope=${encodeURIComponent(o.scope)}` : ''}`;
    const request = { client: { id: o.clientId, secret: o.clientSecret }, body };
    this.prepared = {
      name: this.name,
      issuer: o.target,
      endpoints: await discoverEndpoints(o.target),
      ccOpaque: request,
      ccJwt: request,
      introspector: o.introspectClientId && o.introspectClientSecret ? { id: o.introspectClientId, secret: o.introspectClientSecret } : undefined,
      notes: [`external target ${o.target}: token format as configured for client ${o.clientId}`],
    };
    return this.prepared;
  }

  async close(): Promise<void> {}
}
