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

/**
 * A part an HTTP acceptor thread may only read (the signing keys, which the main thread rotates),
 * as the management routes served there see it: the methods in `reads` answer from this thread's
 * copy; any other throws NeedsOwner, so the request is handed to the main thread before anything
 * changed. (The flows hold the actors themselves: they see reads only by their types, FlowView.)
 */
export function readsOnly<T extends object>(target: T, reads: readonly (keyof T & string)[], what: string): T {
  const allowed = new Set<string | symbol>(reads);
  // One function per method, made on first use: a route's call costs a lookup, not a bind.
  const methods = new Map<string | symbol, unknown>();
  return new Proxy(target, {
    get(actor, property) {
      const value: unknown = Reflect.get(actor, property, actor);
      if (typeof value !== 'function') return value;
      let method = methods.get(property);
      if (method === undefined) {
        method = allowed.has(property)
          ? (value as (...args: unknown[]) => unknown).bind(actor)
          : () => {
              throw new NeedsOwner(`${what}.${String(property)} (the main thread's)`);
            };
        methods.set(property, method);
      }
      return method;
    },
  });
}
