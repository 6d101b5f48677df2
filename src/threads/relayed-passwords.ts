import type { CryptoPool } from '../workers/pool.js';
import { ownerOnly } from './owner-only.js';
import type { AskMainThread, PasswordPoolWork } from './protocol.js';

/**
 * An acceptor thread's worker pool: password hashing and verification run in the main thread's
 * password pool (one pool per process, sized to the cores), asked over this thread's port. Only
 * the CPU work goes there; what a check or a new password decides is decided here, in the store.
 * The rest of the pool (signing with SESAME_SIGNER=pool) stays the main thread's: asked of this
 * one, it hands the request over.
 */
export function relayedPasswordPool(ask: AskMainThread): CryptoPool {
  const work: PasswordPoolWork = {
    hashPassword: async (password) => (await ask('passwords', 'hashPassword', [password])) as string,
    hashPasswordInBulk: async (password) => (await ask('passwords', 'hashPasswordInBulk', [password])) as string,
    verifyPassword: async (password, hash) => (await ask('passwords', 'verifyPassword', [password, hash])) as Awaited<ReturnType<CryptoPool['verifyPassword']>>,
  };
  const rest = ownerOnly<CryptoPool>('the worker pool');
  return new Proxy(rest, {
    get: (target, property) => (property in work ? work[property as keyof PasswordPoolWork] : Reflect.get(target, property)),
  });
}
