/**
 * A read-only view of an actor's record: what callers outside the owning actor get. It is the
 * record itself (no copy, nothing allocated), typed so that it cannot be changed through it; the
 * owner changes state only by writing a new record.
 */
export type View<T> = T extends Uint8Array | ((...args: never[]) => unknown) | string | number | boolean | bigint | symbol | null | undefined
  ? T
  : T extends ReadonlyMap<infer K, infer V>
    ? ReadonlyMap<K, View<V>>
    : T extends ReadonlySet<infer V>
      ? ReadonlySet<View<V>>
      : T extends readonly (infer E)[]
        ? readonly View<E>[]
        : { readonly [K in keyof T]: View<T[K]> };

/**
 * For the owning actor only: a row to build the next version of a record from. The owner never
 * changes a row it handed out; it writes a new one (which may share unchanged parts with the old).
 */
export const ownRow = <T>(view: View<T>): T => view as T;
