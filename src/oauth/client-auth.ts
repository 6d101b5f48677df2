import type { ClientsActor } from '../actors/clients.js';
import type { OrgsActor } from '../actors/orgs.js';
import type { AppRecord, UserRecord } from '../model/records.js';
import type { AssertionVerifier } from './assertion-verifier.js';
import { OAuthError } from './errors.js';
import type { PresentedClient } from './client-credentials.js';

/**
 * Verifies a presented client against the clients and orgs actors. Clients are apps (OIDC, API)
 * or machine users (client_credentials). Every failure is the same `invalid_client`, so the answer
 * does not tell an unknown client from a wrong secret.
 */
export type AuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';

export type AuthenticatedClient =
  | { kind: 'app'; clientId: string; app: AppRecord; method: AuthMethod }
  | { kind: 'machine'; clientId: string; user: UserRecord; method: AuthMethod };

export interface ClientPolicy {
  methods: ReadonlySet<AuthMethod>;
  /** URL of the endpoint being called: a client assertion's `aud` may name it instead of the issuer. */
  endpoint: string;
  apps: boolean;
  machineUsers: boolean;
  /** Only API apps and OIDC apps that have a secret (introspection). */
  appsWithSecretOnly?: boolean;
}

const SECRET_METHODS: ReadonlySet<string> = new Set([
  'OIDC_AUTH_METHOD_TYPE_BASIC',
  'OIDC_AUTH_METHOD_TYPE_POST',
  'API_AUTH_METHOD_TYPE_BASIC',
]);

export function invalidClient(presented: PresentedClient, description = 'client authentication failed'): OAuthError {
  return new OAuthError('invalid_client', description, {
    status: 401,
    headers: presented.method === 'client_secret_basic' ? { 'WWW-Authenticate': 'Basic realm="sesame", charset="UTF-8"' } : {},
  });
}

export class ClientAuthenticator {
  constructor(
    private readonly clients: ClientsActor,
    private readonly orgs: OrgsActor,
    private readonly assertions: AssertionVerifier,
    private readonly issuer: string,
  ) {}

  async authenticate(presented: PresentedClient, policy: ClientPolicy): Promise<AuthenticatedClient> {
    if (presented.method === 'anonymous') throw invalidClient(presented, 'client authentication required');
    if (!policy.methods.has(presented.method)) {
      throw invalidClient(presented, `client authentication method ${presented.method} is not accepted here`);
    }
    if (presented.method === 'private_key_jwt') {
      if (!policy.apps) throw invalidClient(presented);
      const app = await this.assertions.verifyClientAssertion(
        presented.assertion,
        presented.clientId,
        this.issuer + policy.endpoint,
        (description) => invalidClient(presented, description),
      );
      return { kind: 'app', clientId: app.clientId, app, method: 'private_key_jwt' };
    }
    return this.authenticateWithSecret(presented, policy);
  }

  private authenticateWithSecret(
    presented: Exclude<PresentedClient, { method: 'anonymous' | 'private_key_jwt' }>,
    policy: ClientPolicy,
  ): AuthenticatedClient {
    const clientId = presented.clientId;

    const app = policy.apps ? this.clients.appByClient(clientId) : undefined;
    if (app) {
      if (app.state !== 'APP_STATE_ACTIVE' || !this.orgs.getProject(app.projectId)) throw invalidClient(presented);
      const method = app.oidc?.authMethodType ?? app.api?.authMethodType ?? '';
      if (presented.method === 'none') {
        if (method !== 'OIDC_AUTH_METHOD_TYPE_NONE' || policy.appsWithSecretOnly) throw invalidClient(presented);
        return { kind: 'app', clientId, app, method: 'none' };
      }
      if (!SECRET_METHODS.has(method) || !this.clients.appSecretMatches(app, presented.clientSecret)) {
        throw invalidClient(presented);
      }
      return { kind: 'app', clientId, app, method: presented.method };
    }

    if (policy.machineUsers && presented.method !== 'none') {
      const user = this.orgs.findUserByLoginName(clientId);
      if (user?.machine && this.orgs.isActive(user) && this.clients.checkMachineSecret(user.id, presented.clientSecret) === 'ok') {
        return { kind: 'machine', clientId: this.orgs.preferredLoginName(user), user, method: presented.method };
      }
    }
    throw invalidClient(presented);
  }
}
