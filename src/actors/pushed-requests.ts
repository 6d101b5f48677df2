import { mustWin } from '../storage/decisions.js';
import { recordKind, type RecordWrite, type StorePort } from '../storage/store-port.js';
import { sha256Base64url } from '../util/hash.js';
import { newOpaqueToken } from '../util/ids.js';
import { clock } from '../util/clock.js';

/**
 * Pushed authorization requests (RFC 9126): the parameters a client pushed, under the SHA-256 of
 * the reference it got back, for 60 seconds, used once. They live in the store: a push is durable
 * before its reference is handed out (a restart keeps it), any thread reads it, and the store
 * decides its one use, so two authorization requests with one reference (on any threads) cannot
 * both start a sign-in.
 */
const PUSHED_REQUEST_LIFETIME_MS = 60_000;
const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';

export interface PushedRequest {
  /** SHA-256 of the reference's random part. */
  id: string;
  clientId: string;
  /** The pushed parameters, each with its values in order. */
  params: [string, string[]][];
  exp: number;
  /** Its place among the client's waiting requests (Decisions.insertBounded). */
  slot?: string;
}

/**
 * Pushed requests one client may have waiting at once. A public client pushes with its client id
 * alone, so anyone may push as it: beyond this the oldest waiting one makes room (it would expire
 * within the minute anyway), so a burst bounds what is stored and locks nobody out.
 */
export const MAX_PUSHED_PER_CLIENT = 1000;

const PUSHED = recordKind<PushedRequest>('pushedRequests');
/** Each client's waiting requests, oldest first (`<client id digest>/<sequence>`): the per-client bound. */
const BY_CLIENT = recordKind<string>('pushedRequestsByClient');
/** A taken request leaves its place in its client's group with it. */
const leaveGroup = (found: PushedRequest): readonly RecordWrite[] => (found.slot ? [{ leaveGroup: BY_CLIENT, slot: found.slot }] : []);

export class PushedRequestsActor {
  constructor(private readonly store: StorePort) {}

  /** Stores a pushed request (the client's oldest waiting one makes room beyond the bound); resolves with its `request_uri` once durable. */
  async push(clientId: string, params: ReadonlyMap<string, readonly string[]>, now = clock.now()): Promise<{ requestUri: string; expiresAt: number }> {
    const reference = newOpaqueToken();
    const record: PushedRequest = {
      id: sha256Base64url(reference),
      clientId,
      params: [...params].map(([name, values]) => [name, [...values]]),
      exp: now + PUSHED_REQUEST_LIFETIME_MS,
    };
    const group = { index: BY_CLIENT, name: sha256Base64url(clientId), max: MAX_PUSHED_PER_CLIENT };
    await this.store.durable(this.store.insertBounded(PUSHED, record.id, (slot) => ({ ...record, slot }), group));
    return { requestUri: REQUEST_URI_PREFIX + reference, expiresAt: record.exp };
  }

  /**
   * Takes the pushed request a `request_uri` names, if it is unexpired, unused and the client's;
   * `removed` rejects with DecidedElsewhere when another use (on any thread) took it first.
   * Undefined otherwise (a use by another client does not spend it).
   */
  async take(requestUri: string, clientId: string, now = clock.now()): Promise<{ params: Map<string, string[]>; removed: Promise<unknown> } | undefined> {
    if (!requestUri.startsWith(REQUEST_URI_PREFIX)) return undefined;
    const id = sha256Base64url(requestUri.slice(REQUEST_URI_PREFIX.length));
    const record = await this.store.get(PUSHED, id);
    if (!record || record.exp <= now || record.clientId !== clientId) return undefined;
    // The store decides between threads and nodes: one of them takes it, the others find it gone.
    const taken = this.store.takeOnce(PUSHED, id, leaveGroup).then((stored) => stored !== undefined);
    return { params: new Map(record.params), removed: this.store.durable(mustWin(taken, 'pushed request')) };
  }

  /** Removes expired requests (with their index entries). */
  sweep(now = clock.now()): Promise<number> {
    return this.store.durable(
      this.store.sweep(
        PUSHED,
        (r) => r.exp <= now,
        (_id, r) => leaveGroup(r),
      ),
    );
  }
}
