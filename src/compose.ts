import { ActivityActor } from './actors/activity.js';
import { SmtpConfigsActor } from './actors/smtp-configs.js';
import { IdentityProviders, IdentityProvidersReader } from './actors/identity-providers.js';
import { UserCodesActor } from './actors/user-codes.js';
import { LabelAssetsActor } from './actors/label-assets.js';
import { Mailer, type QueuedMail } from './services/mail/mailer.js';
import { Outbox } from './actors/outbox.js';
import { readCaFile } from './services/mail/smtp-sender.js';
import { Notifications } from './services/mail/notifications.js';
import type { Config } from './config.js';
import type { NodeStorage } from './storage/db.js';
import type { MasterKey } from './crypto/master-key.js';
import type { InstanceInfo, OrgsActor, OrgsReader } from './actors/orgs.js';
import type { ClientsActor, ClientsReader } from './actors/clients.js';
import type { KeysActor, KeysReader } from './actors/keys.js';
import type { LeasesActor } from './actors/leases.js';
import { Transactions } from './actors/transaction.js';
import { LoginDecisions } from './services/login-directory.js';
import { ClientRegistrations } from './services/client-registration.js';
import { MigrationStore } from './services/migration/store.js';
import { ImportJobsActor } from './actors/import-jobs.js';
import { PendingRegistrationsActor } from './actors/pending-registrations.js';
import type { ReplayGuardActor } from './actors/replay-guard.js';
import type { CryptoPool } from './workers/pool.js';
import type { Signer } from './workers/signer.js';
import type { FlowView, Ports } from './services/ports.js';
import { IssuedTokensActor } from './actors/issued-tokens.js';
import { AuthCodesActor } from './actors/auth-codes.js';
import { RefreshTokensActor } from './actors/refresh-tokens.js';
import { UserSessionsActor } from './actors/user-sessions.js';
import { ConsentsActor } from './actors/consents.js';
import { AuthRequestsActor } from './actors/auth-requests.js';
import { PushedRequestsActor } from './actors/pushed-requests.js';
import { DeviceAuthorizationsActor } from './actors/device-authorizations.js';
import { DEVICE_FLOW_RULES } from './protocol/device-flow.js';
import { FailureWindowsActor } from './actors/failure-windows.js';
import { LoginSecurityActor } from './actors/login-security.js';
import { SettingsActor } from './actors/settings.js';
import { AccessTokens, originsIn } from './services/access-tokens.js';
import { IntrospectionJwts } from './services/introspection-jwts.js';
import { ClientAuthenticator } from './services/client-auth.js';
import { AssertionVerifier } from './services/assertion-verifier.js';
import { IdTokens } from './services/id-token.js';
import { DpopProofs } from './services/dpop-proofs.js';
import { DPOP_NONCE_PURPOSE, DpopNonces } from './services/dpop-nonces.js';
import { setFramingPolicy } from './http/framing.js';
import { BackchannelLogoutsActor } from './actors/backchannel-logouts.js';
import { LogoutDeliveries } from './services/backchannel-logout/logout-deliveries.js';
import { LogoutTokens } from './services/backchannel-logout/logout-tokens.js';

/** What a thread brings to the parts every HTTP thread builds alike. */
export interface ThreadBasis {
  config: Config;
  issuer: string;
  storage: NodeStorage;
  masterKey: MasterKey;
  /** The thread's copy of the directory, read-only for the flows (their writes are the store port's). */
  instance: InstanceInfo;
  orgs: OrgsReader;
  clients: ClientsReader;
  keys: KeysReader;
  /** Signs tokens: the worker pool, or the serving thread itself. */
  signer: Signer;
  /** Checks signatures (client assertions, the JWT profile grant, DPoP proofs): the pool, or the serving thread. */
  signatures: Pick<CryptoPool, 'verifySignature'>;
  /** First uses of assertions and proofs, decided in the store (the same for every thread). */
  replayGuard: ReplayGuardActor;
  /**
   * Whether this thread delivers back-channel logouts (the main thread: with what to run before each
   * pass, its copy of the directory catching up), or only queues them (false).
   */
  deliversLogouts: false | { beforePass: () => void };
}

/** The parts every HTTP thread has: the store decides for each of them, so any thread serves what they serve. */
export type FlowPorts = Pick<
  FlowView,
  | 'config'
  | 'issuer'
  | 'instance'
  | 'orgs'
  | 'clients'
  | 'keys'
  | 'issuedTokens'
  | 'accessTokens'
  | 'clientAuth'
  | 'introspectionJwts'
  | 'assertions'
  | 'dpopProofs'
  | 'settings'
  | 'idTokens'
  | 'userSessions'
  | 'authCodes'
  | 'refreshTokens'
  | 'consents'
  | 'logoutDeliveries'
  | 'authRequests'
  | 'pushedRequests'
  | 'deviceAuthorizations'
  | 'failureWindows'
  | 'loginSecurity'
  | 'masterKey'
  | 'smtpConfigs'
  | 'idps'
  | 'userCodes'
  | 'mailer'
  | 'notifications'
  | 'labelAssets'
  | 'activity'
>;

/** Mails handed to SMTP relays at once (a quarter of them to one recipient domain). */
const MAIL_CONCURRENCY = 8;

/** The flows' parts (see composePorts): actors over the store, and the services on them. */
export function composeFlowPorts(basis: ThreadBasis): FlowPorts {
  const { config, issuer, storage, masterKey, instance, orgs, clients, keys, signer, signatures, replayGuard, deliversLogouts } = basis;
  const issuedTokens = new IssuedTokensActor(storage.records);
  const assertions = new AssertionVerifier(issuer, clients, orgs, signatures, replayGuard);
  const smtpConfigs = new SmtpConfigsActor(storage.meta, masterKey);
  const userCodes = new UserCodesActor(storage.records, masterKey);
  const failureWindows = new FailureWindowsActor(storage.records, masterKey);
  // Any thread queues mail in the store's outbox; the main thread delivers (as the logouts).
  const mailer = new Mailer(
    new Outbox<QueuedMail>(storage.records, storage.feed, 'mailOutbox', 'mail'),
    smtpConfigs,
    masterKey,
    { retryForMs: config.mailRetryFor, timeoutMs: config.mailTimeout, concurrency: MAIL_CONCURRENCY, ca: readCaFile(config.smtpTlsCaFile) },
    deliversLogouts !== false,
    deliversLogouts === false ? undefined : deliversLogouts.beforePass,
  );
  return {
    config,
    issuer,
    instance,
    orgs,
    clients,
    keys,
    issuedTokens,
    accessTokens: new AccessTokens(issuer, keys, signer, issuedTokens, Math.floor(config.accessTokenLifetime / 1000), originsIn(clients, orgs)),
    clientAuth: new ClientAuthenticator(clients, orgs, assertions, issuer),
    introspectionJwts: new IntrospectionJwts(issuer, keys, signer),
    assertions,
    // DPoP proofs share the assertions' replay guard: one store decides first uses for every thread.
    dpopProofs: config.featureDpop ? new DpopProofs(issuer, signatures, replayGuard, config.dpopRequireNonce ? new DpopNonces(masterKey.deriveKey(DPOP_NONCE_PURPOSE)) : undefined) : undefined,
    settings: new SettingsActor(storage.meta, config.featureTokenExchange, setFramingPolicy),
    idTokens: new IdTokens(issuer, keys, signer, Math.floor(config.idTokenLifetime / 1000)),
    userSessions: new UserSessionsActor(storage.records, config.refreshTokenIdleLifetime),
    authCodes: new AuthCodesActor(storage.records),
    refreshTokens: new RefreshTokensActor(storage.records, masterKey, config.refreshTokenIdleLifetime, config.refreshTokenLifetime, config.refreshTokenReuseGrace),
    consents: new ConsentsActor(storage.records),
    authRequests: new AuthRequestsActor(storage.records, masterKey, config.authRequestsPerAddress),
    pushedRequests: new PushedRequestsActor(storage.records),
    deviceAuthorizations: new DeviceAuthorizationsActor(storage.records, masterKey, DEVICE_FLOW_RULES),
    failureWindows,
    activity: new ActivityActor(storage.activity, storage.records),
    loginSecurity: new LoginSecurityActor(storage.records),
    // Any thread that ends sessions queues their logouts in the store's outbox; the main thread delivers.
    logoutDeliveries: new LogoutDeliveries(
      clients,
      new BackchannelLogoutsActor(storage.records, storage.feed),
      new LogoutTokens(issuer, keys, signer),
      { retryForMs: config.backchannelLogoutRetryFor, timeoutMs: config.backchannelLogoutTimeout, concurrency: config.backchannelLogoutConcurrency },
      deliversLogouts !== false,
      deliversLogouts === false ? undefined : deliversLogouts.beforePass,
    ),
    masterKey,
    smtpConfigs,
    idps: new IdentityProvidersReader(orgs, masterKey),
    userCodes,
    labelAssets: new LabelAssetsActor(storage.records),
    mailer,
    notifications: new Notifications(orgs, userCodes, mailer, failureWindows, issuer),
  };
}

/** What a thread adds to its basis for the routes' parts: its directory actors with their writes, its pool, its leases. */
export interface PortsBasis extends Omit<ThreadBasis, 'orgs' | 'clients' | 'keys'> {
  /** The thread's copy of the directory: the flows read it, the management API and the login write it (each write decided in the store). */
  orgs: OrgsActor;
  clients: ClientsActor;
  keys: KeysActor;
  /** The worker pool: the main thread's own, or on an acceptor its password work asked of the main thread's. */
  pool: CryptoPool;
  /** This thread's holder of leases in the store (a person's password checks one at a time, whichever thread). */
  leases: LeasesActor;
  isReady: () => boolean;
}

/**
 * The one wiring of every part an HTTP thread's routes use (src/app.ts for the main thread,
 * src/threads/local-routes.ts for the others): the flows' (composeFlowPorts), the login's
 * decisions, dynamic client registration, the management API's and the import's, all over the
 * thread's copy of the directory with each write decided in the store.
 */
export function composePorts(basis: PortsBasis): Ports {
  const { config, issuer, storage, instance, orgs, clients, keys, pool, leases, isReady } = basis;
  const flows = composeFlowPorts(basis);
  const transactions = new Transactions(storage);
  return {
    ...flows,
    orgs,
    clients,
    keys,
    pool,
    idps: new IdentityProviders(orgs, basis.masterKey),
    loginDirectory: new LoginDecisions(orgs, pool, leases),
    clientRegistrations: new ClientRegistrations({ clients, orgs, settings: flows.settings, config, issuer, instance }),
    migration: new MigrationStore(transactions, orgs, clients),
    importJobs: new ImportJobsActor(storage.records),
    pendingRegistrations: new PendingRegistrationsActor(storage.records),
    transactions,
    isReady,
  };
}
