import type { Config } from '../config.js';
import type { MasterKey } from '../crypto/master-key.js';
import type { Storage } from '../storage/db.js';
import { OrgsActor, type InstanceInfo } from '../actors/orgs.js';
import { ClientsActor } from '../actors/clients.js';
import { KeysActor } from '../actors/keys.js';
import { SettingsActor } from '../actors/settings.js';
import { IssuedTokensActor } from '../actors/issued-tokens.js';
import { AccessTokens, originsIn } from '../services/access-tokens.js';
import { IntrospectionJwts } from '../services/introspection-jwts.js';
import { ClientAuthenticator } from '../services/client-auth.js';
import { AssertionVerifier } from '../services/assertion-verifier.js';
import type { SignatureCheck } from '../workers/signature-check.js';
import type { ReplayGuardActor } from '../actors/replay-guard.js';
import { IdTokens } from '../services/id-token.js';
import { DpopProofs } from '../services/dpop-proofs.js';
import { DPOP_NONCE_PURPOSE, DpopNonces } from '../services/dpop-nonces.js';
import type { RefreshTokensActor } from '../actors/refresh-tokens.js';
import { clientCredentialsGrant, type ClientCredentialsPorts } from '../services/grants/client-credentials.js';
import { chooseSignerMode, InlineSigner, type Signer } from '../workers/signer.js';
import { setFramingPolicy } from '../http/framing.js';
import { discoveryRoutes } from '../http/routes/discovery.js';
import { keysRoute } from '../http/routes/keys.js';
import { introspectRoute } from '../http/routes/introspect.js';
import { userinfoRoute } from '../http/routes/userinfo.js';
import { tokenRoute } from '../http/routes/token.js';
import { revokeRoute } from '../http/routes/revoke.js';
import { importPrecheck, IMPORT_PATH } from '../http/admin/migration.js';
import { REGISTERED_CLIENT_PATTERN, registrationPrechecks } from '../http/routes/register.js';
import type { Request, Route } from '../http/types.js';
import { ownerOnly } from './owner-only.js';

/** What an acceptor thread serves itself, built from its copy of the directory (rebuilt after each change). */
export interface LocalRoutes {
  /** Routes served on this thread, by pattern. */
  served: Map<string, Route>;
  /** Checks run before a forwarded route's body is read (the import's caller, registration's token), by pattern. */
  prechecks: Map<string, (req: Request) => void>;
  /**
   * Patterns whose precheck refuses a request without an Authorization header whatever the state:
   * a copy held back from reloading may still refuse those (nobody was added a moment ago).
   */
  credentialsRequired: ReadonlySet<string>;
}

/**
 * The acceptor thread's copy of the directory and the services of its hot paths, loaded from
 * LMDB as committed. Nothing here writes, except an opaque token's record under a fresh random
 * key; whatever needs the main thread's state throws NeedsOwner (see ownerOnly) and is forwarded.
 */
export function buildLocalRoutes(input: {
  config: Config;
  issuer: string;
  storage: Storage;
  masterKey: MasterKey;
  /** Kept across reloads: the thread's imported public keys and what its guard saw. */
  signatureCheck: SignatureCheck;
  replayGuard: ReplayGuardActor;
}): LocalRoutes {
  const { config, issuer, storage, masterKey, signatureCheck, replayGuard } = input;
  storage.meta.reload();
  const orgs = new OrgsActor(storage, new URL(issuer).hostname);
  const instance = orgs.instance() as InstanceInfo;
  const clients = new ClientsActor(storage);
  const keys = new KeysActor(storage.stores.signingKeys, masterKey, config.signingAlg, config.keyRotationInterval, Math.max(config.accessTokenLifetime, config.idTokenLifetime));
  keys.load();
  const issuedTokens = new IssuedTokensActor(storage);
  // The pool is the main thread's; this thread signs inline, RSA included. Handing an RSA
  // signature to the pool by way of the main thread made that thread the serial part (measured,
  // cc-jwt-RS256 on 2 threads: 3,314 req/s and 531 CPU µs/req forwarded, 4,102 and 453 inline).
  // SESAME_SIGNER=pool, set explicitly, still sends every signature to the pool.
  const inline = chooseSignerMode(config.signer) === 'inline' || config.signer === 'auto';
  const signer: Signer = inline ? new InlineSigner() : ownerOnly<Signer>('signing in the worker pool');
  const accessTokens = new AccessTokens(issuer, keys, signer, issuedTokens, Math.floor(config.accessTokenLifetime / 1000), originsIn(clients, orgs));
  const clientAuth = new ClientAuthenticator(clients, orgs, ownerOnly<AssertionVerifier>('a client assertion'), issuer);
  // Introspection, the one served path that ends right after client authentication, also takes
  // client assertions here: checked on this thread, their first use decided in LMDB (a shared
  // replay guard). Elsewhere an assertion is the main thread's, since a request handed over after
  // its first use was recorded would be refused there as a replay.
  const assertions = new AssertionVerifier(issuer, clients, orgs, signatureCheck, replayGuard);
  const introspectionAuth = new ClientAuthenticator(clients, orgs, assertions, issuer);
  // DPoP proofs are checked here too (signature inline, first use decided in LMDB by the shared
  // guard, so a proof replayed to another thread is refused). A proof is spent before the token is
  // signed: when signing must go to the main thread's pool (SESAME_SIGNER=pool), a request handed
  // over after its proof was spent would be refused there as a replay, so DPoP requests are then
  // handed over whole, before anything is checked.
  // (Userinfo signs nothing: it checks its proofs here whatever the signer.)
  const dpopProofs = config.featureDpop
    ? new DpopProofs(issuer, signatureCheck, replayGuard, config.dpopRequireNonce ? new DpopNonces(masterKey.deriveKey(DPOP_NONCE_PURPOSE)) : undefined)
    : undefined;
  const tokenDpopProofs = dpopProofs && !inline ? ownerOnly<DpopProofs>('a DPoP proof (tokens are signed in the worker pool)') : dpopProofs;
  const ctx = {
    config,
    issuer,
    instance,
    orgs,
    clients,
    keys,
    issuedTokens,
    accessTokens,
    clientAuth,
    dpopProofs,
    introspectionJwts: new IntrospectionJwts(issuer, keys, signer),
    idTokens: new IdTokens(issuer, keys, signer, Math.floor(config.idTokenLifetime / 1000)),
    refreshTokens: ownerOnly<RefreshTokensActor>('refresh tokens'),
    settings: new SettingsActor(storage.meta, config.featureTokenExchange, setFramingPolicy),
  };
  const served = [
    ...discoveryRoutes(ctx),
    keysRoute(ctx),
    introspectRoute({ ...ctx, clientAuth: introspectionAuth }),
    userinfoRoute(ctx),
    revokeRoute(ctx),
    tokenRoute<ClientCredentialsPorts>({ ...ctx, dpopProofs: tokenDpopProofs }, new Map([[clientCredentialsGrant.type, clientCredentialsGrant]])),
  ];
  return {
    served: new Map(served.map((route) => [route.pattern, route])),
    prechecks: new Map([[IMPORT_PATH, importPrecheck(ctx)], ...registrationPrechecks(ctx)]),
    credentialsRequired: new Set([IMPORT_PATH, REGISTERED_CLIENT_PATTERN]),
  };
}
