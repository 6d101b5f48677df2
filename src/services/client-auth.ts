import type { AuthMethod } from '../protocol/client-auth-methods.js';
import { appUnusableReason } from '../domain/usable.js';
import type { ClientsReader } from '../actors/clients.js';
import type { OrgsReader } from '../actors/orgs.js';
import { appCredential, usesClientSecret, type AppRecord, type UserRecord } from '../model/records.js';
import type { AssertionVerifier } from './assertion-verifier.js';
import { log } from '../util/log.js';
import { OAuthError } from '../protocol/errors.js';
import type { PresentedClient } from '../protocol/presented-credentials.js';
import type { View } from '../util/readonly.js';
import { traced, tracingOn } from '../observability/tracing.js';

/**
 * Verifies a presented client against the clients and orgs actors. Clients are apps (OIDC, API)
 * or machine users (client_credentials). Every failure is the same `invalid_client`, so the answer
 * does not tell an unknown client from a wrong secret.
 */
export type AuthenticatedClient = { kind: 'app'; clientId: string; app: View<AppRecord>; method: AuthMethod } | { kind: 'machine'; clientId: string; user: UserRecord; method: AuthMethod };

export interface ClientPolicy {
  methods: ReadonlySet<AuthMethod>;
  /** URL of the endpoint being called: a client assertion's `aud` may name it instead of the issuer. */
  endpoint: string;
  apps: boolean;
  machineUsers: boolean;
}

export function invalidClient(presented: PresentedClient, description = 'client authentication failed'): OAuthError {
  return new OAuthError('invalid_client', description, {
    status: 401,
    headers: presented.method === 'client_secret_basic' ? { 'WWW-Authenticate': 'Basic realm="sesame", charset="UTF-8"' } : {},
  });
}

export class ClientAuthenticator {
  constructor(
    private readonly clients: ClientsReader,
    private readonly orgs: OrgsReader,
    private readonly assertions: AssertionVerifier,
    private readonly issuer: string,
  ) {}

  /**
   * Every failure is logged with its precise reason (the response stays the same generic
   * invalid_client); never the secret or the assertion. A method, not a closure per request: the
   * token and introspection endpoints authenticate on every call.
   */
  private reject(presented: PresentedClient, policy: ClientPolicy, reason: string, description?: string): OAuthError {
    log.warn('client authentication failed', {
      client_id: 'clientId' in presented ? (presented.clientId ?? null) : null,
      method: presented.method,
      endpoint: policy.endpoint,
      reason,
    });
    return invalidClient(presented, description);
  }

  authenticate(presented: PresentedClient, policy: ClientPolicy): Promise<AuthenticatedClient> {
    if (!tracingOn()) return this.authenticatePresented(presented, policy);
    // The method is one of a fixed set; the client id, chosen by the caller, stays out of the span.
    return traced('client authentication', { 'sesame.client_auth.method': presented.method, 'sesame.endpoint': policy.endpoint }, () => this.authenticatePresented(presented, policy));
  }

  private async authenticatePresented(presented: PresentedClient, policy: ClientPolicy): Promise<AuthenticatedClient> {
    if (presented.method === 'anonymous') throw this.reject(presented, policy, 'no client authentication presented', 'client authentication required');
    if (!policy.methods.has(presented.method)) {
      const description = `client authentication method ${presented.method} is not accepted here`;
      throw this.reject(presented, policy, description, description);
    }
    if (presented.method === 'private_key_jwt') {
      if (!policy.apps) throw this.reject(presented, policy, 'client assertions are only for applications here');
      const app = await this.assertions.verifyClientAssertion(presented.assertion, presented.clientId, this.issuer + policy.endpoint, (description, detail) =>
        this.reject(presented, policy, `client assertion: ${detail ?? description}`, description),
      );
      return { kind: 'app', clientId: app.clientId, app, method: 'private_key_jwt' };
    }
    return this.authenticateWithSecret(presented, policy);
  }

  private authenticateWithSecret(presented: Exclude<PresentedClient, { method: 'anonymous' | 'private_key_jwt' }>, policy: ClientPolicy): AuthenticatedClient {
    const clientId = presented.clientId;

    const app = policy.apps ? this.clients.appByClient(clientId) : undefined;
    if (app) {
      const unusable = appUnusableReason(app, this.orgs);
      if (unusable) throw this.reject(presented, policy, unusable);
      const method = app.oidc?.authMethodType ?? app.api?.authMethodType ?? '';
      if (presented.method === 'none') {
        if (appCredential(method) !== 'public') throw this.reject(presented, policy, `no secret presented; the application uses ${method}`);
        return { kind: 'app', clientId, app, method: 'none' };
      }
      if (!usesClientSecret(method)) throw this.reject(presented, policy, `secret presented; the application uses ${method}`);
      if (!this.clients.appSecretMatches(app, presented.clientSecret)) throw this.reject(presented, policy, 'wrong client secret');
      return { kind: 'app', clientId, app, method: presented.method };
    }

    if (policy.machineUsers && presented.method !== 'none') {
      const user = this.orgs.findUserByLoginName(clientId);
      if (user?.machine) {
        if (!this.orgs.isActive(user)) throw this.reject(presented, policy, 'machine user is not active');
        const check = this.clients.checkMachineSecret(user.id, presented.clientSecret);
        if (check === 'ok') return { kind: 'machine', clientId: this.orgs.preferredLoginName(user), user, method: presented.method };
        throw this.reject(presented, policy, check === 'no-secret' ? 'machine user has no secret' : 'wrong client secret');
      }
    }
    throw this.reject(presented, policy, 'unknown client');
  }
}
