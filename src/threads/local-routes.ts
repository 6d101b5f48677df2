import type { Config } from '../config.js';
import type { MasterKey } from '../crypto/master-key.js';
import type { NodeStorage } from '../storage/db.js';
import { OrgsActor, type InstanceInfo } from '../actors/orgs.js';
import { ClientsActor } from '../actors/clients.js';
import { keysActorOf } from '../directory.js';
import { ClientAuthenticator } from '../services/client-auth.js';
import type { AssertionVerifier } from '../services/assertion-verifier.js';
import type { SignatureCheck } from '../workers/signature-check.js';
import type { ReplayGuardActor } from '../actors/replay-guard.js';
import type { DpopProofs } from '../services/dpop-proofs.js';
import { clientCredentialsGrant } from '../services/grants/client-credentials.js';
import type { GrantsPorts } from '../services/grants/index.js';
import type { Grant } from '../services/grants/grant.js';
import { chooseSignerMode, InlineSigner, type Signer } from '../workers/signer.js';
import { tokenRoute } from '../http/routes/token.js';
import { introspectRoute } from '../http/routes/introspect.js';
import { authorizeRoute } from '../http/routes/authorize.js';
import { loginRoutes } from '../http/routes/login.js';
import { relayedPasswordPool } from './relayed-passwords.js';
import { LeasesActor } from '../actors/leases.js';
import type { AskMainThread } from './protocol.js';
import { IMPORT_JOBS_PATH, IMPORT_PATH } from '../http/admin/migration.js';
import { REGISTERED_CLIENT_PATTERN } from '../http/routes/register.js';
import { routes } from '../http/routes/index.js';
import { PATHS } from '../protocol/discovery.js';
import { CONSOLE_PATHS } from '../services/console-app.js';
import { healthRoutes } from '../http/routes/health.js';
import type { Route } from '../http/types.js';
import { composePorts } from '../compose.js';
import { ownerOnly } from './owner-only.js';
import type { Ports } from '../services/ports.js';
import type { DirectoryChange } from '../storage/directory-log.js';
import { takeDirectoryChanges, type DirectoryCopy } from './followed-writes.js';

/** What an acceptor thread serves itself, over its copy of the directory (kept current by takeChanges). */
export interface LocalRoutes {
  /** Routes served on this thread, by pattern. */
  served: Map<string, Route>;
  /**
   * Patterns whose precheck refuses a request without an Authorization header whatever the state:
   * a copy held back from reloading may still refuse those (nobody was added a moment ago).
   */
  credentialsRequired: ReadonlySet<string>;
  /**
   * Takes changes another thread committed to the directory into this copy, record by record (the
   * directory's change feed names them). False when one names a store the copy does not know: the
   * copy is then loaded again whole.
   */
  takeChanges(changes: readonly DirectoryChange[]): boolean;
  /** The copy itself, for a follower of the database (PostgreSQL: FollowedOnPostgres). */
  copy: DirectoryCopy;
  /** The parts the routes were built on (readiness, for the routes answered from current copies). */
  ports: Ports;
}

/**
 * The acceptor thread's copy of the directory, loaded from LMDB as committed and kept current from
 * the directory's change feed (takeChanges), and the routes it serves with the parts every thread
 * has (src/compose.ts): every route but health and readiness (the main thread's state), each
 * decision made in the store: the flows, the login pages, dynamic client registration, the
 * management and admin APIs and the import. The password work is asked of the main thread's pool.
 * With SESAME_SIGNER=pool, a served route that meets the pool signer (the main thread's) throws
 * NeedsOwner before it changes anything, and the request is handed over whole.
 */
export function buildLocalRoutes(input: {
  config: Config;
  issuer: string;
  storage: NodeStorage;
  masterKey: MasterKey;
  /** Kept across reloads: the thread's imported public keys and what its guard saw. */
  signatureCheck: SignatureCheck;
  replayGuard: ReplayGuardActor;
  /** Asks the main thread for what it does for every thread (see MainThreadWork): the password pool's work. */
  askMainThread: AskMainThread;
}): LocalRoutes {
  const { config, issuer, storage, masterKey, signatureCheck, replayGuard, askMainThread } = input;
  storage.meta.reload();
  const orgs = new OrgsActor(storage, new URL(issuer).hostname);
  const instance = orgs.instance() as InstanceInfo;
  const clients = new ClientsActor(storage);
  const keys = keysActorOf(storage, masterKey, config, config.signingAlg);
  keys.load();
  // The pool is the main thread's; this thread signs inline, RSA included. Handing an RSA
  // signature to the pool by way of the main thread made that thread the serial part (measured,
  // cc-jwt-RS256 on 2 threads: 3,314 req/s and 531 CPU µs/req forwarded, 4,102 and 453 inline).
  // SESAME_SIGNER=pool, set explicitly, still sends every signature to the pool: this thread then
  // serves only what ends before anything is signed or decided (see below).
  const inline = chooseSignerMode(config.signer, undefined, config.httpThreads) === 'inline';
  const signer: Signer = inline ? new InlineSigner() : ownerOnly<Signer>('signing in the worker pool');
  // This thread's parts for the routes, wired as the main thread's are (src/compose.ts): the flows
  // read the directory copy through their types (FlowView); the login, client registration, the
  // management API and the import write it, each write decided in the store; the password work is
  // asked of the main thread's pool.
  const here: Ports = composePorts({
    config,
    issuer,
    storage,
    masterKey,
    instance,
    orgs,
    clients,
    keys,
    signer,
    // Signatures (client assertions, the JWT profile grant, DPoP proofs) are checked on this thread,
    // their first use decided in the store (the shared replay guard), as on every thread.
    signatures: signatureCheck,
    replayGuard,
    deliversLogouts: false,
    pool: relayedPasswordPool(askMainThread),
    leases: new LeasesActor(storage.records),
    // Serving at all: the main thread is ready (acceptors join the port only then).
    isReady: () => true,
  });
  // With SESAME_SIGNER=pool a token is signed on the main thread, after its code, refresh token or
  // proof was spent here: a request handed over then would be refused there as a replay. So this
  // thread serves only client_credentials (spending nothing before it signs), with client
  // assertions and DPoP proofs left to the main thread too, and neither authorize nor the login
  // (a sign-in ends by answering the client: a code, or with response_type id_token a signed
  // token), nor the console's sign-in (its code exchange). Introspection may sign its answer (RFC 9701) after authenticating its caller, so a
  // client assertion there is left to the main thread as well; userinfo, revocation, PAR and the
  // device flow sign nothing after what they spend.
  const signsAfterSpending = inline ? new Set<string>() : new Set([authorizeRoute(here).pattern, ...loginRoutes(here).map((route) => route.pattern), CONSOLE_PATHS.callback]);
  const poolRoutes = (): Map<string, Route> => {
    const assertionsToOwner: Ports = {
      ...here,
      clientAuth: new ClientAuthenticator(clients, orgs, ownerOnly<AssertionVerifier>('a client assertion (tokens are signed in the worker pool)'), issuer),
      dpopProofs: here.dpopProofs && ownerOnly<DpopProofs>('a DPoP proof (tokens are signed in the worker pool)'),
    };
    return new Map([
      [PATHS.token, tokenRoute<GrantsPorts>(assertionsToOwner, new Map([[clientCredentialsGrant.type, clientCredentialsGrant as Grant<GrantsPorts>]]))],
      [PATHS.introspection, introspectRoute(assertionsToOwner)],
    ]);
  };
  const replaced = inline ? new Map<string, Route>() : poolRoutes();
  // The server's one list of routes (src/http/routes/index.ts), less what only the main thread
  // serves: health and readiness (its state).
  const mainThreadOnly = new Set(healthRoutes(here).map((route) => route.pattern));
  const served = routes(here).flatMap((route): Route[] => {
    if (mainThreadOnly.has(route.pattern) || signsAfterSpending.has(route.pattern)) return [];
    return [replaced.get(route.pattern) ?? route];
  });
  const copy: DirectoryCopy = { orgs, clients, keys, storage, settings: here.settings };
  const takeChanges = (changes: readonly DirectoryChange[]): boolean => takeDirectoryChanges(copy, changes);
  return {
    takeChanges,
    copy,
    ports: here,
    served: new Map(served.map((route) => [route.pattern, route])),
    credentialsRequired: new Set([IMPORT_PATH, IMPORT_JOBS_PATH, REGISTERED_CLIENT_PATTERN]),
  };
}
