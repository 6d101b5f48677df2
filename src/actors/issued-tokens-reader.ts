import type { Storage } from '../storage/db.js';
import { NeedsOwner } from '../model/errors.js';
import { IssuedTokensActor, type AccessTokenClaims } from './issued-tokens.js';

/**
 * Issued tokens as an HTTP acceptor thread sees them: it issues opaque tokens (a put under a
 * fresh random key decides nothing another thread could contend for) and reads revocations
 * straight from LMDB, where the main thread's actor commits them before it answers. Revoking and
 * sweeping stay the main thread's.
 */
export class IssuedTokensReader extends IssuedTokensActor {
  constructor(storage: Storage) {
    super(storage, false);
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

  override revokeOpaque(): Promise<void> {
    return Promise.reject(new NeedsOwner('revoking a token'));
  }

  override revokeJwt(): Promise<void> {
    return Promise.reject(new NeedsOwner('revoking a token'));
  }

  override sweep(): Promise<number> {
    return Promise.resolve(0);
  }
}
