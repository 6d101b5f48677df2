import type { ActivityActor } from '../actors/activity.js';
import type { ClientsActor, ClientsReader } from '../actors/clients.js';
import type { KeysActor, KeysReader } from '../actors/keys.js';
import type { InstanceInfo, OrgsActor, OrgsReader } from '../actors/orgs.js';
import type { AuthCodesActor } from '../actors/auth-codes.js';
import type { AuthRequestsActor } from '../actors/auth-requests.js';
import type { DeviceAuthorizationsActor } from '../actors/device-authorizations.js';
import type { PushedRequestsActor } from '../actors/pushed-requests.js';
import type { ConsentsActor } from '../actors/consents.js';
import type { FailureWindowsActor } from '../actors/failure-windows.js';
import type { RefreshTokensActor } from '../actors/refresh-tokens.js';
import type { IssuedTokensActor } from '../actors/issued-tokens.js';
import type { UserSessionsActor } from '../actors/user-sessions.js';
import type { IdTokens } from './id-token.js';
import type { MasterKey } from '../crypto/master-key.js';
import type { MigrationStore } from './migration/store.js';
import type { ImportJobsActor } from '../actors/import-jobs.js';
import type { PendingRegistrationsActor } from '../actors/pending-registrations.js';
import type { Transactions } from '../actors/transaction.js';
import type { Config } from '../config.js';
import type { AccessTokens } from './access-tokens.js';
import type { IntrospectionJwts } from './introspection-jwts.js';
import type { ClientAuthenticator } from './client-auth.js';
import type { AssertionVerifier } from './assertion-verifier.js';
import type { DpopProofs } from './dpop-proofs.js';
import type { SettingsActor } from '../actors/settings.js';
import type { LoginSecurityActor } from '../actors/login-security.js';
import type { LoginDirectory } from './login-directory.js';
import type { ClientRegistrar } from './client-registrar.js';
import type { CryptoPool } from '../workers/pool.js';
import type { LogoutDeliveries } from './backchannel-logout/logout-deliveries.js';
import type { SmtpConfigsActor } from '../actors/smtp-configs.js';
import type { IdentityProviders, IdentityProvidersReader } from '../actors/identity-providers.js';
import type { UserCodesActor } from '../actors/user-codes.js';
import type { LabelAssetsActor } from '../actors/label-assets.js';
import type { Mailer } from './mail/mailer.js';
import type { Notifications } from './mail/notifications.js';

/**
 * Everything src/app.ts wires. Nobody takes all of it: each module names what it uses as a
 * `Pick<Ports, ...>` (its port; the flows every thread serves pick from FlowView), so its signature says what it may touch.
 */
export interface Ports {
  readonly config: Config;
  readonly issuer: string;
  readonly instance: InstanceInfo;
  readonly orgs: OrgsActor;
  readonly clients: ClientsActor;
  readonly keys: KeysActor;
  readonly issuedTokens: IssuedTokensActor;
  readonly accessTokens: AccessTokens;
  readonly clientAuth: ClientAuthenticator;
  /** Signs introspection answers for resource servers that ask for JWTs (RFC 9701). */
  readonly introspectionJwts: IntrospectionJwts;
  /** Signed assertions: private_key_jwt and the JWT profile grant. */
  readonly assertions: AssertionVerifier;
  /** DPoP proofs (RFC 9449); undefined when SESAME_FEATURE_DPOP=false (the DPoP header is then ignored). */
  readonly dpopProofs: DpopProofs | undefined;
  /** Instance feature flags and security policy. */
  readonly settings: SettingsActor;
  readonly pool: CryptoPool;
  // Browser sign-in (issue 4).
  readonly idTokens: IdTokens;
  readonly authRequests: AuthRequestsActor;
  readonly loginSecurity: LoginSecurityActor;
  /** What the login decides about people in the directory (password checks and lockout, enrollment, registration): decided in the store on every thread (registration by the main thread). */
  readonly loginDirectory: LoginDirectory;
  readonly userSessions: UserSessionsActor;
  readonly authCodes: AuthCodesActor;
  readonly refreshTokens: RefreshTokensActor;
  /** Device authorization grant (RFC 8628): what devices asked for, until redeemed. */
  readonly deviceAuthorizations: DeviceAuthorizationsActor;
  /** Pushed authorization requests (RFC 9126): parameters a client pushed, until used once. */
  readonly pushedRequests: PushedRequestsActor;
  /** Failures counted in sliding windows in the store (wrong device user codes, open registrations: per address). */
  readonly failureWindows: FailureWindowsActor;
  /** The activity log: searched by the event API, pruned by the sweep, and events that stand on their own. */
  readonly activity: ActivityActor;
  /** What people allowed self-registered clients (the consent step of the login). */
  readonly consents: ConsentsActor;
  /** Back-channel logout: queues a logout token for the apps of ending sessions and delivers it (issue 13). */
  readonly logoutDeliveries: LogoutDeliveries;
  /** The identity providers of the instance and the orgs (ZITADEL's IdP templates); the login's federation reads them. */
  readonly idps: IdentityProviders;
  /** The instance's SMTP configurations (admin API); mail goes out through the active one. */
  readonly smtpConfigs: SmtpConfigsActor;
  /** Codes mailed to people (verification, reset, initialization, email OTP): digests, single use. */
  readonly userCodes: UserCodesActor;
  /** The label policies' images and fonts, by digest. */
  readonly labelAssets: LabelAssetsActor;
  /** Queues mail in the store's outbox (any thread); the main thread sends it. */
  readonly mailer: Mailer;
  /** What people are mailed (codes with links, a changed password), in their language. */
  readonly notifications: Notifications;
  /** Seals secrets at rest (TOTP secrets) and derives purpose keys (CSRF). */
  readonly masterKey: MasterKey;
  /** Export snapshots and atomic import commits (organization migration). */
  readonly migration: MigrationStore;
  /** Imports answered before they are over: their progress and reports, in the store. */
  readonly importJobs: ImportJobsActor;
  /** Security keys being registered through the auth API: their challenges, in the store. */
  readonly pendingRegistrations: PendingRegistrationsActor;
  /** Changes of several directory actors in one commit (a machine secret with the user's revocation horizon). */
  readonly transactions: Transactions;
  /** Dynamic client registration's decisions on the apps (RFC 7591/7592): each registered client holds one of its project's places in the store. */
  readonly clientRegistrations: ClientRegistrar;
  /** False while starting or shutting down (readiness). */
  isReady(): boolean;
}

/**
 * What the flows every HTTP thread serves (tokens, authorize, the login, the device flow, PAR,
 * logout) may use: the thread's copy of the directory, read-only for them (OrgsReader,
 * ClientsReader, KeysReader), so a flow that wrote it would not compile;
 * flows decide in the store (src/storage/decisions.ts), and change people only through
 * LoginDirectory (its changes are compare-and-sets on the stored person). The management API,
 * which writes the directory, takes Ports.
 */
export type FlowView = Omit<Ports, 'orgs' | 'clients' | 'keys' | 'idps'> & {
  readonly orgs: OrgsReader;
  readonly idps: IdentityProvidersReader;
  readonly clients: ClientsReader;
  readonly keys: KeysReader;
};
