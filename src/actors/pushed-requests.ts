import type { Storage } from '../storage/db.js';
import { mustWin } from '../storage/decisions.js';
import { sha256Base64url } from '../util/hash.js';
import { newOpaqueToken } from '../util/ids.js';
import { clock } from '../util/clock.js';

/**
 * Owns pushed authorization requests (RFC 9126): the parameters a client pushed, under the
 * SHA-256 of the reference it got back, for 60 seconds, used once. Each push is in memory and
 * durable before its reference is handed out (a restart keeps it); a use takes it at once, so
 * two authorization requests with one reference cannot both start a sign-in.
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
}

/**
 * Pushed requests one client may have waiting at once. A public client pushes with its client id
 * alone, so anyone may push as it: beyond this the oldest waiting one makes room (it would expire
 * within the minute anyway), so a burst bounds what is stored and locks nobody out.
 */
export const MAX_PUSHED_PER_CLIENT = 1000;

export class PushedRequestsActor {
  private readonly requests = new Map<string, PushedRequest>();
  /** Each client's waiting requests by id, oldest first. */
  private readonly byClient = new Map<string, Set<string>>();
  /** Expired records found on disk at start, removed by the next sweep (as AuthRequestsActor does). */
  private expiredOnDisk: string[] = [];

  constructor(private readonly storage: Storage) {
    const now = clock.now();
    for (const { key, value } of storage.stores.pushedRequests.getRange()) {
      const record = value as PushedRequest;
      if (record.exp > now) this.add(record);
      else this.expiredOnDisk.push(key);
    }
  }

  /** Stores a pushed request; resolves with its `request_uri` once durable. */
  async push(clientId: string, params: ReadonlyMap<string, readonly string[]>, now = clock.now()): Promise<{ requestUri: string; expiresAt: number }> {
    const reference = newOpaqueToken();
    const record: PushedRequest = {
      id: sha256Base64url(reference),
      clientId,
      params: [...params].map(([name, values]) => [name, [...values]]),
      exp: now + PUSHED_REQUEST_LIFETIME_MS,
    };
    const waiting = this.byClient.get(clientId);
    for (const oldest of waiting ?? []) {
      if (waiting!.size < MAX_PUSHED_PER_CLIENT) break;
      this.drop(oldest);
      void this.storage.durable(this.storage.stores.pushedRequests.remove(oldest)).catch(() => undefined);
    }
    this.add(record);
    try {
      await this.storage.durable(this.storage.stores.pushedRequests.put(record.id, record));
    } catch (error) {
      this.drop(record.id);
      throw error;
    }
    return { requestUri: REQUEST_URI_PREFIX + reference, expiresAt: record.exp };
  }

  /**
   * Takes the pushed request a `request_uri` names, if it is unexpired, unused and the client's:
   * gone at once (single use), also from disk. Undefined otherwise (a use by another client does
   * not spend it).
   */
  take(requestUri: string, clientId: string, now = clock.now()): { params: Map<string, string[]>; removed: Promise<unknown> } | undefined {
    if (!requestUri.startsWith(REQUEST_URI_PREFIX)) return undefined;
    const id = sha256Base64url(requestUri.slice(REQUEST_URI_PREFIX.length));
    const record = this.requests.get(id);
    if (!record || record.exp <= now || record.clientId !== clientId) return undefined;
    this.drop(id);
    // The store decides between threads: one of them takes it, the others find it gone.
    const taken = this.storage.decisions.takeOnce(this.storage.stores.pushedRequests, id).then((stored) => stored !== undefined);
    return { params: new Map(record.params), removed: this.storage.durable(mustWin(taken, 'pushed request')) };
  }

  private add(record: PushedRequest): void {
    this.requests.set(record.id, record);
    let waiting = this.byClient.get(record.clientId);
    if (!waiting) this.byClient.set(record.clientId, (waiting = new Set()));
    waiting.add(record.id);
  }

  private drop(id: string): void {
    const record = this.requests.get(id);
    if (!record) return;
    this.requests.delete(id);
    const waiting = this.byClient.get(record.clientId);
    waiting?.delete(id);
    if (waiting?.size === 0) this.byClient.delete(record.clientId);
  }

  async sweep(now = clock.now()): Promise<number> {
    const writes = this.expiredOnDisk.map((key) => this.storage.stores.pushedRequests.remove(key));
    this.expiredOnDisk = [];
    for (const [id, record] of this.requests) {
      if (record.exp <= now) {
        this.drop(id);
        writes.push(this.storage.stores.pushedRequests.remove(id));
      }
    }
    await Promise.all(writes);
    return writes.length;
  }
}
