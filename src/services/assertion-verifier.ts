import { appIsUsable } from '../domain/usable.js';
import type { AssertionKey, ClientsReader } from '../actors/clients.js';
import type { OrgsReader } from '../actors/orgs.js';
import type { ReplayGuardActor } from '../actors/replay-guard.js';
import { appCredential, type AppRecord, type UserRecord } from '../model/records.js';
import type { CryptoPool } from '../workers/pool.js';
import { algorithmOfKey, assertionHeader, checkAssertionClaims, type AssertionClaims, ASSERTION_NOT_VERIFIED, type AssertionFailure } from '../protocol/assertion.js';
import { readJws, type DecodedJws } from '../protocol/jwt.js';
import { clock } from '../util/clock.js';
import type { View } from '../util/readonly.js';

/**
 * Verifies signed assertions against registered keys: `private_key_jwt` client assertions (app
 * keys) and JWT profile grant assertions (machine keys). Claims rules are in assertion.ts; the
 * signature is checked in the worker pool; used assertions are remembered by the replay guard.
 */
export class AssertionVerifier {
  constructor(
    private readonly issuer: string,
    private readonly clients: ClientsReader,
    private readonly orgs: OrgsReader,
    /** Where signatures are checked: the worker pool, or the calling thread (an HTTP acceptor's SignatureCheck). */
    private readonly pool: Pick<CryptoPool, 'verifySignature'>,
    private readonly replay: ReplayGuardActor,
  ) {}

  /** A client assertion; `clientId` is the form's client_id when sent (else the assertion's iss). */
  async verifyClientAssertion(assertion: string, clientId: string | undefined, endpointUrl: string, fail: AssertionFailure): Promise<View<AppRecord>> {
    const jws = this.decode(assertion, fail);
    const id = clientId ?? (typeof jws.payload.iss === 'string' ? jws.payload.iss : undefined);
    const app = id === undefined ? undefined : this.clients.appByClient(id);
    const method = app?.oidc?.authMethodType ?? app?.api?.authMethodType ?? '';
    if (!appIsUsable(app, this.orgs) || appCredential(method) !== 'key') {
      throw fail(ASSERTION_NOT_VERIFIED, 'client unknown or not registered for private_key_jwt');
    }
    const { kid, alg } = assertionHeader(jws, fail);
    const key = this.clients.appAssertionKey(app.id, kid);
    await this.verifySignature(jws, key, alg, fail);
    const claims = checkAssertionClaims(
      jws,
      {
        subject: app.clientId,
        audiences: [this.issuer, endpointUrl, `${this.issuer}/oauth/v2/token`],
        leewaySeconds: Math.ceil((app.oidc?.clockSkewMs ?? 0) / 1000) + 1,
        nowSeconds: clock.seconds(),
      },
      fail,
    );
    await this.rejectReplay(app.clientId, claims, fail);
    return app;
  }

  /** A JWT profile grant assertion of a machine user (ZITADEL key file: kid = keyId, iss = sub = userId). */
  async verifyJwtProfile(assertion: string, fail: AssertionFailure): Promise<UserRecord> {
    const jws = this.decode(assertion, fail);
    const userId = typeof jws.payload.iss === 'string' ? jws.payload.iss : undefined;
    const user = userId === undefined ? undefined : this.orgs.getUser(userId);
    if (!user?.machine || !this.orgs.isActive(user)) throw fail(ASSERTION_NOT_VERIFIED, 'assertion subject is not an active machine user');
    const { kid, alg } = assertionHeader(jws, fail);
    await this.verifySignature(jws, this.clients.machineAssertionKey(user.id, kid), alg, fail);
    const claims = checkAssertionClaims(jws, { subject: user.id, audiences: [this.issuer, `${this.issuer}/oauth/v2/token`], leewaySeconds: 1, nowSeconds: clock.seconds() }, fail);
    await this.rejectReplay(user.id, claims, fail);
    return user;
  }

  /**
   * A token-exchange `jwt` subject: signed by the calling client's own key (iss = client id),
   * naming the user in `sub`. Returns the user id.
   */
  async verifySubjectJwt(token: string, app: View<AppRecord>, fail: AssertionFailure): Promise<string> {
    const jws = this.decode(token, fail);
    const { kid, alg } = assertionHeader(jws, fail);
    await this.verifySignature(jws, this.clients.appAssertionKey(app.id, kid), alg, fail);
    const sub = jws.payload.sub;
    if (typeof sub !== 'string' || sub.length === 0) throw fail('jwt has no sub');
    // Same time, audience and replay rules as a client assertion; only `sub` names someone else.
    const claims = checkAssertionClaims(
      { ...jws, payload: { ...jws.payload, sub: app.clientId } },
      {
        subject: app.clientId,
        audiences: [this.issuer, `${this.issuer}/oauth/v2/token`],
        leewaySeconds: Math.ceil((app.oidc?.clockSkewMs ?? 0) / 1000) + 1,
        nowSeconds: clock.seconds(),
      },
      fail,
    );
    await this.rejectReplay(app.clientId, claims, fail);
    return sub;
  }

  private decode(assertion: string, fail: AssertionFailure): DecodedJws {
    const read = readJws(assertion);
    if ('problem' in read) throw fail(`assertion refused: ${read.problem}`);
    return read.jws;
  }

  private async verifySignature(jws: DecodedJws, key: AssertionKey | undefined, alg: string, fail: AssertionFailure): Promise<void> {
    if (!key) throw fail(ASSERTION_NOT_VERIFIED, 'no registered, unexpired key matches the assertion kid');
    const keyAlg = algorithmOfKey(key.publicKey);
    if (!keyAlg || keyAlg !== alg) throw fail(ASSERTION_NOT_VERIFIED, `assertion algorithm ${alg} does not match the registered key`);
    const valid = await this.pool.verifySignature({
      keyId: key.id,
      spkiDer: key.spkiDer,
      alg: keyAlg,
      signingInput: jws.signingInput,
      signature: jws.signature,
    });
    if (!valid) throw fail(ASSERTION_NOT_VERIFIED, 'assertion signature invalid');
  }

  /**
   * Remembers an assertion by its `jti` and refuses a second use. One without `jti` is accepted
   * again within its lifetime, as ZITADEL does: its SDKs sign `iat`/`exp` in whole seconds and no
   * `jti`, so two requests in one second carry byte-identical assertions.
   */
  private async rejectReplay(subject: string, claims: AssertionClaims, fail: AssertionFailure): Promise<void> {
    if (claims.jti === undefined) return;
    const key = `${subject}\n${claims.jti}`;
    if (!(await this.replay.firstUse(key, claims.exp))) throw fail('assertion was already used');
  }
}
