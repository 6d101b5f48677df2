import type { Storage } from '../storage/db.js';
import { NeedsOwner } from '../model/errors.js';
import { IssuedTokensActor } from './issued-tokens.js';

/**
 * Issued tokens as an HTTP acceptor thread sees them. It reads revocations straight from LMDB,
 * where the main thread's actor commits them before answering. It issues and removes opaque
 * tokens itself: each is one write that decides nothing another thread could contend for (a
 * record under a fresh random key; a removal two threads may both make with the same result).
 * Every revocation record (of a JWT, a grant, a session) and sweeping stay the main thread's, so
 * its actor answers JWT revocations from memory alone.
 */
export class IssuedTokensReader extends IssuedTokensActor {
  constructor(storage: Storage) {
    super(storage, false);
  }

  protected override hasGrantRevocation(grantId: string): boolean {
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

  override revokeJwt(): Promise<void> {
    return Promise.reject(new NeedsOwner('revoking a JWT'));
  }

  override sweep(): Promise<number> {
    return Promise.resolve(0);
  }
}
