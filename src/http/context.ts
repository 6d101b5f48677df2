import type { ClientsActor } from '../actors/clients.js';
import type { KeysActor } from '../actors/keys.js';
import type { InstanceInfo, OrgsActor } from '../actors/orgs.js';
import type { SessionsActor } from '../actors/sessions.js';
import type { Config } from '../config.js';
import type { AccessTokens } from '../oauth/access-tokens.js';
import type { ClientAuthenticator } from '../oauth/client-auth.js';
import type { CryptoPool } from '../workers/pool.js';

/** What route modules may use: the actors and services wired by src/app.ts. */
export interface AppContext {
  readonly config: Config;
  readonly issuer: string;
  readonly instance: InstanceInfo;
  readonly orgs: OrgsActor;
  readonly clients: ClientsActor;
  readonly keys: KeysActor;
  readonly sessions: SessionsActor;
  readonly tokens: AccessTokens;
  readonly clientAuth: ClientAuthenticator;
  readonly pool: CryptoPool;
  /** False while starting or shutting down (readiness). */
  isReady(): boolean;
}
