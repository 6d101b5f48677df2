import { NeedsOwner } from '../model/errors.js';

/**
 * Stands in, on an HTTP acceptor thread, for a part only the main thread has (the worker pool's
 * signer, with SESAME_SIGNER=pool): any method called on it throws NeedsOwner, and the request is
 * served by the main thread instead. Served paths reach these parts only before they change
 * anything, so handing the request over whole is safe.
 */
export function ownerOnly<T extends object>(what: string): T {
  return new Proxy({} as T, {
    get(_target, property) {
      // Never mistaken for a promise when awaited or returned from an async function.
      if (property === 'then') return undefined;
      return () => {
        throw new NeedsOwner(what);
      };
    },
  });
}
