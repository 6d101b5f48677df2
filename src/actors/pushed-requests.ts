import type { Storage } from '../storage/db.js';
import { leaveBoundedGroup, mustWin } from '../storage/decisions.js';
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

export class PushedRequestsActor {
  constructor(private readonly storage: Storage) {}

  /** Stores a pushed request (the client's oldest waiting one makes room beyond the bound); resolves with its `request_uri` once durable. */
  async push(clientId: string, params: ReadonlyMap<string, readonly string[]>, now = clock.now()): Promise<{ requestUri: string; expiresAt: number }> {
    const reference = newOpaqueToken();
    const record: PushedRequest = {
      id: sha256Base64url(reference),
      clientId,
      params: [...params].map(([name, values]) => [name, [...values]]),
      exp: now + PUSHED_REQUEST_LIFETIME_MS,
    };
    const group = { index: this.storage.stores.pushedRequestsByClient, name: sha256Base64url(clientId), max: MAX_PUSHED_PER_CLIENT };
    await this.storage.durable(this.storage.decisions.insertBounded(this.storage.stores.pushedRequests, record.id, (slot) => ({ ...record, slot }), group));
    return { requestUri: REQUEST_URI_PREFIX + reference, expiresAt: record.exp };
  }

  /**
   * Takes the pushed request a `request_uri` names, if it is unexpired, unused and the client's;
   * `removed` rejects with DecidedElsewhere when another use (on any thread) took it first.
   * Undefined otherwise (a use by another client does not spend it).
   */
  take(requestUri: string, clientId: string, now = clock.now()): { params: Map<string, string[]>; removed: Promise<unknown> } | undefined {
    if (!requestUri.startsWith(REQUEST_URI_PREFIX)) return undefined;
    const id = sha256Base64url(requestUri.slice(REQUEST_URI_PREFIX.length));
    const record = this.storage.stores.pushedRequests.get(id) as PushedRequest | undefined;
    if (!record || record.exp <= now || record.clientId !== clientId) return undefined;
    // The store decides between threads: one of them takes it, the others find it gone.
    const index = this.storage.stores.pushedRequestsByClient;
    const taken = this.storage.decisions
      .takeOnce(this.storage.stores.pushedRequests, id, (found: PushedRequest) => found.slot && leaveBoundedGroup(index, found.slot))
      .then((stored) => stored !== undefined);
    return { params: new Map(record.params), removed: this.storage.durable(mustWin(taken, 'pushed request')) };
  }

  /** Removes expired requests (with their index entries). */
  async sweep(now = clock.now()): Promise<number> {
    const db = this.storage.stores.pushedRequests;
    const index = this.storage.stores.pushedRequestsByClient;
    const expired = [...db.getRange()].map(({ value }) => value as PushedRequest).filter((r) => r.exp <= now);
    await this.storage.durable(
      Promise.all(expired.map((r) => this.storage.decisions.takeOnce(db, r.id, (found: PushedRequest) => found.slot && leaveBoundedGroup(index, found.slot)))),
    );
    return expired.length;
  }
}
