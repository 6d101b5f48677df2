import type { Storage } from '../storage/db.js';
import { NeedsOwner } from '../model/errors.js';
import { IssuedTokensActor, type AccessTokenClaims } from './issued-tokens.js';

/**
 * Issued tokens as an HTTP acceptor thread sees them. It reads revocations straight from LMDB,
 * where every thread commits them before answering. It issues opaque tokens and revokes single
 * tokens itself: each is one write that decides nothing another thread could contend for (a
 * record under a fresh random key; a removal or a revocation mark that two threads may both make
 * with the same result), and the main thread's actor looks up the JWT revocations it did not make
 * (`othersRevokeJwts`). Revoking grants and sessions, and sweeping, stay the main thread's.
 */
export class IssuedTokensReader extends IssuedTokensActor {
  constructor(storage: Storage) {
    super(storage, { loadRevocations: false });
  }

  override isRevokedByOrigin(claims: AccessTokenClaims): boolean {
    return (claims.grantId !== undefined && this.isGrantRevoked(claims.grantId)) || (claims.sid !== undefined && this.isSessionEnded(claims.sid));
  }

  override isGrantRevoked(grantId: string): boolean {
    return this.storage.stores.revokedGrants.get(grantId) !== undefined;
  }

  override isSessionEnded(sid: string): boolean {
    return this.storage.stores.revokedSessions.get(sid) !== undefined;
  }

  override isJwtRevoked(jti: string): boolean {
    return this.storage.revokedJwts.get(jti) !== undefined;
  }

  override revokeGrant(): Promise<unknown> {
    return Promise.reject(new NeedsOwner('revoking a grant'));
  }

  override revokeSession(): Promise<unknown> {
    return Promise.reject(new NeedsOwner('ending a session'));
  }

  override async revokeJwt(jti: string, exp: number): Promise<void> {
    if (this.isJwtRevoked(jti)) return;
    await this.storage.durable(this.storage.revokedJwts.put(jti, exp));
  }

  override sweep(): Promise<number> {
    return Promise.resolve(0);
  }
}
