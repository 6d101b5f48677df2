import type { ActorClaim } from './issued-tokens.js';
import { newOpaqueToken } from '../util/ids.js';
import { mustWin } from '../storage/decisions.js';
import { recordKind, type StorePort } from '../storage/store-port.js';
import type { MasterKey } from '../crypto/master-key.js';
import { secretMatches, sha256 } from '../util/hash.js';
import { clock } from '../util/clock.js';
import { KeyedQueue } from '../util/keyed-queue.js';
import type { View } from '../util/readonly.js';

/**
 * Owns refresh token families (one per authorization that asked for `offline_access`). A token is
 * `<familyId>.<256 random bits>`; only its SHA-256 is stored. Every use rotates it; presenting a
 * superseded token is reuse, which revokes the family (OAuth 2.0 Security BCP §4.14.2) — except,
 * when configured, within a short grace window after the rotation, where a retry gets the same
 * successor (kept sealed with the master key for that window only).
 */
export interface FamilyGrant {
  clientId: string;
  userId: string;
  sid: string;
  scopes: readonly string[];
  audience: readonly string[];
  authTime: number;
  amr: readonly string[];
  /** Kept from an impersonating token exchange, so refreshed tokens stay marked. */
  act?: ActorClaim;
  /** Resource indicators (RFC 8707) of the authorization: a refresh may ask for any of them. */
  resources?: readonly string[];
  /** A public client's DPoP key (RFC 7638 thumbprint): every refresh must prove it (RFC 9449 §5). */
  jkt?: string;
  /** Unix seconds no token of the family may outlive (from a token exchange: its subject token's expiry). */
  notAfter?: number;
}

export interface RefreshFamily extends FamilyGrant {
  id: string;
  createdAt: number;
  /** Absolute expiry (ms), fixed at creation. */
  expiresAt: number;
  /** The app's idle lifetime (ms) when it has its own, else the instance's applies (capped by it at use too). */
  idleLifetimeMs?: number;
  lastUsedAt: number;
  currentHash: Uint8Array;
  previous?: { hash: Uint8Array; rotatedAt: number; successorSealed?: Uint8Array };
  /** Digests of older superseded tokens (most recent last, bounded): presenting one is reuse. */
  superseded?: Uint8Array[];
}

export type Rotation =
  /** `committed` rejects with DecidedElsewhere when the store says another rotation of the token came first. */
  | { status: 'rotated'; family: View<RefreshFamily>; token: string; committed: Promise<unknown> }
  /**
   * `committed`: the rotation the successor comes from, when this thread's write of it is still in
   * flight; it rejects with DecidedElsewhere if another thread's rotation came first (the successor
   * is then void: judge the use again).
   */
  | { status: 'retried'; family: View<RefreshFamily>; token: string; committed: Promise<unknown> }
  | { status: 'reused'; family: RefreshFamily }
  | { status: 'expired'; family: RefreshFamily }
  | { status: 'invalid' };

/** How many superseded tokens per family are still recognised as reuse (and revoke the family). */
const SUPERSEDED_KEPT = 32;

function parse(token: string): { familyId: string } | undefined {
  const dot = token.indexOf('.');
  if (dot <= 0 || token.length > 200) return undefined;
  return { familyId: token.slice(0, dot) };
}

const FAMILIES = recordKind<RefreshFamily>('refreshFamilies');

export class RefreshTokensActor {
  /** Writes not yet committed (lmdb reads would still return the older value), with their commit. */
  private readonly pending = new Map<string, { family: RefreshFamily | null; committed: Promise<unknown> }>();
  private readonly turns = new KeyedQueue();

  constructor(
    private readonly store: StorePort,
    private readonly masterKey: MasterKey,
    private readonly idleLifetimeMs: number,
    private readonly absoluteLifetimeMs: number,
    private readonly reuseGraceMs: number,
  ) {}

  private async read(id: string): Promise<RefreshFamily | undefined> {
    const pending = this.pending.get(id);
    if (pending !== undefined) return pending.family ?? undefined;
    return this.store.get(FAMILIES, id);
  }

  /**
   * Writes a family; with `rotatedFrom`, only while the stored family's current token is still that
   * one (compare-and-set on the token it rotated: the store decides between threads), else
   * DecidedElsewhere. Reads on this thread see the write at once (`pending`) until it settles.
   */
  private write(family: RefreshFamily, rotatedFrom?: Uint8Array): Promise<unknown> {
    const decided = this.inOrder(family.id, () =>
      rotatedFrom === undefined
        ? this.store.put(FAMILIES, family.id, family)
        : mustWin(
            this.store.claimOnce(FAMILIES, family.id, (stored) => (Buffer.from(stored.currentHash).equals(rotatedFrom) ? family : undefined)).then((c) => c.claimed),
            'refresh token',
          ),
    );
    const entry = { family, committed: this.store.durable(decided) };
    this.pending.set(family.id, entry);
    const settled = entry.committed.finally(() => {
      if (this.pending.get(family.id) === entry) this.pending.delete(family.id);
    });
    // Awaited by the grant only after its other reads (and not at all when one of them refuses the
    // request): a lost race must not surface meanwhile as an unhandled rejection, which ends the
    // process. Whoever awaits it still sees the rejection.
    settled.catch(() => undefined);
    return settled;
  }

  /**
   * Sends a family's write once this thread's write before it has settled: the uses judged here one
   * after another reach the store in that order. On PostgreSQL statements leave on several
   * connections, so without it a reuse's removal could overtake the rotation it was judged
   * against (the rotation then lost to a deleted family, and no use of the token succeeded).
   */
  private inOrder(familyId: string, send: () => Promise<unknown>): Promise<unknown> {
    const before = this.pending.get(familyId)?.committed;
    return before ? before.then(send, send) : send();
  }

  private static newToken(familyId: string): string {
    return `${familyId}.${newOpaqueToken()}`;
  }

  /**
   * Starts a family whose id is the grant id; resolves with its first token once durable.
   * `lifetimes`: the app's idle and absolute lifetimes (ms; see appLifetimes), else the instance's.
   */
  async create(familyId: string, grant: FamilyGrant, lifetimes?: { idle: number; absolute: number }): Promise<string> {
    const now = clock.now();
    const token = RefreshTokensActor.newToken(familyId);
    await this.write({
      ...grant,
      id: familyId,
      createdAt: now,
      expiresAt: now + (lifetimes?.absolute ?? this.absoluteLifetimeMs),
      ...(lifetimes && lifetimes.idle !== this.idleLifetimeMs ? { idleLifetimeMs: lifetimes.idle } : {}),
      lastUsedAt: now,
      currentHash: sha256(token),
    });
    return token;
  }

  /** The family named by a token, whatever its secret (for checks before `rotate`). */
  async familyOf(token: string): Promise<View<RefreshFamily> | undefined> {
    const parsed = parse(token);
    return parsed && this.read(parsed.familyId);
  }

  /** The family a token belongs to, if it is the current or the just-superseded token. */
  async find(token: string): Promise<View<RefreshFamily> | undefined> {
    const parsed = parse(token);
    const family = parsed && (await this.read(parsed.familyId));
    if (!family) return undefined;
    if (secretMatches(token, family.currentHash) || (family.previous && secretMatches(token, family.previous.hash))) return family;
    return undefined;
  }

  isExpired(family: View<RefreshFamily>, now = clock.now()): boolean {
    return family.expiresAt <= now || family.lastUsedAt + Math.min(family.idleLifetimeMs ?? this.idleLifetimeMs, this.idleLifetimeMs) <= now;
  }

  /**
   * Rotates synchronously (two concurrent uses on this thread cannot both rotate); the caller awaits
   * `committed`, where the store decides between threads (DecidedElsewhere: judge the use again).
   */
  rotate(token: string, now = clock.now()): Promise<Rotation> {
    const parsed = parse(token);
    if (!parsed) return Promise.resolve({ status: 'invalid' });
    // One family's uses on this thread are judged one after another, each after the one before has
    // issued its write: a second use sees the first's rotation (in flight) and is judged against it.
    return this.turns.run(parsed.familyId, () => this.judge(parsed.familyId, token, now));
  }

  private async judge(familyId: string, token: string, now: number): Promise<Rotation> {
    const family = await this.read(familyId);
    if (!family) return { status: 'invalid' };
    if (secretMatches(token, family.currentHash)) {
      if (this.isExpired(family, now)) return { status: 'expired', family };
      const next = RefreshTokensActor.newToken(family.id);
      const rotated: RefreshFamily = {
        ...family,
        lastUsedAt: now,
        currentHash: sha256(next),
        superseded: [...(family.superseded ?? []), ...(family.previous ? [family.previous.hash] : [])].slice(-SUPERSEDED_KEPT),
        previous: {
          hash: family.currentHash,
          rotatedAt: now,
          ...(this.reuseGraceMs > 0 ? { successorSealed: this.masterKey.encrypt(Buffer.from(next)) } : {}),
        },
      };
      return { status: 'rotated', family: rotated, token: next, committed: this.write(rotated, Buffer.from(family.currentHash)) };
    }
    const previous = family.previous;
    if (previous?.successorSealed && secretMatches(token, previous.hash) && now - previous.rotatedAt <= this.reuseGraceMs && !this.isExpired(family, now)) {
      // A successor from this thread's rotation still in flight holds only if that rotation wins.
      const committed = this.pending.get(family.id)?.committed ?? Promise.resolve();
      return { status: 'retried', family, token: this.masterKey.decrypt(previous.successorSealed).toString(), committed };
    }
    // Only the token this family just replaced counts as reuse: the family id alone is not secret
    // (it is the grant id in every access token's jti), so a wrong secret must not revoke the family.
    if ((previous && secretMatches(token, previous.hash)) || family.superseded?.some((hash) => secretMatches(token, hash))) {
      return { status: 'reused', family };
    }
    return { status: 'invalid' };
  }

  /**
   * Deletes a family; resolves once durable. A decision like a rotation's, so it lands after the
   * rotations this thread decided before it (lmdb runs single writes ahead of queued transactions):
   * a reuse revokes the family after the first use's rotation, not under it.
   */
  remove(familyId: string): Promise<unknown> {
    const entry = { family: null, committed: this.store.durable(this.inOrder(familyId, () => this.store.update(FAMILIES, familyId, (found) => (found ? null : undefined)))) };
    this.pending.set(familyId, entry);
    return entry.committed.finally(() => {
      if (this.pending.get(familyId) === entry) this.pending.delete(familyId);
    });
  }

  /** Removes expired families (one used meanwhile, on any thread, stays). */
  sweep(now = clock.now()): Promise<number> {
    return this.store.sweep(FAMILIES, (family) => this.isExpired(family, now));
  }
}
