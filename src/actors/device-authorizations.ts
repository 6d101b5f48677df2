import { createHmac } from 'node:crypto';
import type { Storage } from '../storage/db.js';
import { mustWin } from '../storage/decisions.js';
import type { MasterKey } from '../crypto/master-key.js';
import { sha256Base64url } from '../util/hash.js';
import { newOpaqueToken } from '../util/ids.js';
import { clock } from '../util/clock.js';
import type { View } from '../util/readonly.js';

/**
 * Owns device authorizations (RFC 8628): what a device asked for, under the SHA-256 of its device
 * code (256 random bits) and an HMAC of its user code (a short code: keyed, so a copy of the
 * database does not give the codes away by brute force), pending until the person allows or
 * denies it in the browser, then redeemed once by the device. Each change is in memory at once
 * (parallel requests see it) and resolves once durable; a failed write takes it back. Records
 * stay on disk across restarts until some minutes after they expired, so a late poll still gets
 * `expired_token` and a second redemption `invalid_grant` rather than an unknown code.
 */
export interface DeviceRequest {
  clientId: string;
  scopes: string[];
  /** Projects named by `urn:zitadel:iam:org:project:id:{id}:aud` scopes. */
  audienceProjects: string[];
  /** The org an org scope restricts the sign-in to. */
  orgId?: string | undefined;
  /** Resource indicators (RFC 8707) the device's tokens are for. */
  resources?: string[];
}

/** Who allowed the device, in which browser session: the grant its tokens are issued for. */
export interface DeviceApproval {
  grantId: string;
  userId: string;
  sid: string;
  audience: string[];
  authTime: number;
  amr: readonly string[];
}

export type DeviceAuthorizationState = 'pending' | 'approved' | 'denied' | 'redeemed';

export interface DeviceAuthorization extends DeviceRequest {
  /** SHA-256 of the device code. */
  id: string;
  /** HMAC of the user code (canonical form). */
  userCodeKey: string;
  exp: number;
  state: DeviceAuthorizationState;
  approval?: DeviceApproval;
}

/** The protocol's numbers and user code format (src/protocol/device-flow.ts), handed in by the wiring. */
export interface DeviceFlowRules {
  lifetimeMs: number;
  intervalMs: number;
  /** What a `slow_down` adds to the interval. */
  slowDownStepMs: number;
  newUserCode(): string;
  /**
   * Unexpired authorizations one client may have at once (each lives a code's lifetime, then is kept
   * ten minutes more uncounted): a public client's id is no secret, so this bounds what anyone can
   * make Sesame store, and a burst holds the client up for a code's lifetime at most.
   */
  maxRecordsPerClient: number;
}

/** A client has as many device authorizations on record as it may. */
export class TooManyDeviceAuthorizations extends Error {}

/** How long a record outlives its expiry: late polls are told `expired_token`, reuses `invalid_grant`. */
const KEPT_AFTER_EXPIRY_MS = 10 * 60_000;

export class DeviceAuthorizationsActor {
  private readonly byId = new Map<string, DeviceAuthorization>();
  private readonly byUserCode = new Map<string, DeviceAuthorization>();
  /**
   * Each client's unexpired device authorizations by id, oldest first (the bound). Records kept
   * after their expiry (for late polls) do not count: a burst then holds the client up for at most
   * a code's lifetime, not the quarter of an hour its records stay.
   */
  private readonly liveByClient = new Map<string, Map<string, number>>();
  /**
   * When each device may poll next and its interval now. Memory only: a restart forgets the pace,
   * which at worst lets one early poll through.
   */
  private readonly pace = new Map<string, { nextPollAt: number; intervalMs: number }>();
  private readonly userCodeKey: Buffer;

  constructor(
    private readonly storage: Storage,
    masterKey: MasterKey,
    private readonly rules: DeviceFlowRules,
  ) {
    this.userCodeKey = masterKey.deriveKey('device-user-code');
    for (const { value } of storage.stores.deviceAuthorizations.getRange()) this.remember(value as DeviceAuthorization);
  }

  private remember(record: DeviceAuthorization): void {
    this.byId.set(record.id, record);
    this.byUserCode.set(record.userCodeKey, record);
    let live = this.liveByClient.get(record.clientId);
    if (!live) this.liveByClient.set(record.clientId, (live = new Map()));
    live.set(record.id, record.exp);
  }

  private forget(record: DeviceAuthorization): void {
    if (this.byId.get(record.id) === record) {
      this.byId.delete(record.id);
      const live = this.liveByClient.get(record.clientId);
      live?.delete(record.id);
      if (live?.size === 0) this.liveByClient.delete(record.clientId);
    }
    if (this.byUserCode.get(record.userCodeKey) === record) this.byUserCode.delete(record.userCodeKey);
    this.pace.delete(record.id);
  }

  /** The client's unexpired authorizations; the expired ones leave the count from the oldest end (all live as long). */
  private liveCount(clientId: string, now: number): number {
    const live = this.liveByClient.get(clientId);
    if (!live) return 0;
    for (const [id, exp] of live) {
      if (exp > now) break;
      live.delete(id);
    }
    return live.size;
  }

  private keyOfUserCode(userCode: string): string {
    return createHmac('sha256', this.userCodeKey).update(userCode).digest('base64url');
  }

  /** A new authorization; resolves with its codes once it is durable (before they are handed out). */
  async start(request: DeviceRequest, now = clock.now()): Promise<{ deviceCode: string; userCode: string; expiresAt: number }> {
    if (this.liveCount(request.clientId, now) >= this.rules.maxRecordsPerClient) throw new TooManyDeviceAuthorizations();
    let userCode = this.rules.newUserCode();
    // A user code must name one authorization: draw again on a (rare) clash with a kept one.
    while (this.byUserCode.has(this.keyOfUserCode(userCode))) userCode = this.rules.newUserCode();
    const deviceCode = newOpaqueToken();
    const record: DeviceAuthorization = {
      ...request,
      id: sha256Base64url(deviceCode),
      userCodeKey: this.keyOfUserCode(userCode),
      exp: now + this.rules.lifetimeMs,
      state: 'pending',
    };
    this.remember(record);
    this.pace.set(record.id, { nextPollAt: now + this.rules.intervalMs, intervalMs: this.rules.intervalMs });
    try {
      await this.storage.durable(this.storage.stores.deviceAuthorizations.put(record.id, record));
    } catch (error) {
      this.forget(record);
      throw error;
    }
    return { deviceCode, userCode, expiresAt: record.exp };
  }

  /** The pending, unexpired authorization a user code (canonical form) names. */
  pendingByUserCode(userCode: string, now = clock.now()): View<DeviceAuthorization> | undefined {
    return pendingAt(this.byUserCode.get(this.keyOfUserCode(userCode)), now);
  }

  /** A pending, unexpired authorization by id (a sign-in on the device page carries the id). */
  pending(id: string, now = clock.now()): View<DeviceAuthorization> | undefined {
    return pendingAt(this.byId.get(id), now);
  }

  /** The authorization of a device code, whatever its state (expired ones until they are swept). */
  byDeviceCode(deviceCode: string): View<DeviceAuthorization> | undefined {
    return this.byId.get(sha256Base64url(deviceCode));
  }

  /**
   * A poll of the token endpoint: `slow_down` when it came before the interval was up, which then
   * grows by 5 seconds (RFC 8628 §3.5); counted at once, so parallel polls slow each other down.
   */
  poll(authorization: View<DeviceAuthorization>, now = clock.now()): 'ok' | 'slow_down' {
    const pace = this.pace.get(authorization.id) ?? { nextPollAt: 0, intervalMs: this.rules.intervalMs };
    if (now < pace.nextPollAt) pace.intervalMs += this.rules.slowDownStepMs;
    const early = now < pace.nextPollAt;
    pace.nextPollAt = now + pace.intervalMs;
    this.pace.set(authorization.id, pace);
    return early ? 'slow_down' : 'ok';
  }

  /** The person allowed the device: false when it is no longer pending or has expired. */
  approve(authorization: View<DeviceAuthorization>, approval: DeviceApproval, now = clock.now()): Promise<boolean> {
    return this.decide(authorization, { state: 'approved', approval }, now);
  }

  /** The person denied the device: false when it is no longer pending or has expired. */
  deny(authorization: View<DeviceAuthorization>, now = clock.now()): Promise<boolean> {
    return this.decide(authorization, { state: 'denied' }, now);
  }

  private async decide(authorization: View<DeviceAuthorization>, change: Pick<DeviceAuthorization, 'state' | 'approval'>, now: number): Promise<boolean> {
    const record = pendingAt(this.byId.get(authorization.id), now);
    if (!record) return false;
    const before = { ...record };
    Object.assign(record, change);
    try {
      await this.storage.durable(this.storage.stores.deviceAuthorizations.put(record.id, record));
    } catch (error) {
      // Still pending: the person may try again.
      if (record.state === change.state) Object.assign(record, { state: before.state, approval: before.approval });
      throw error;
    }
    return true;
  }

  /**
   * Marks an approved authorization redeemed. Call it in the same tick as the checks (no await
   * between), then await the promise: of two concurrent redemptions on this thread one gets
   * `false`; between threads the store decides, and the promise rejects with DecidedElsewhere for
   * the one that came second. A failed write leaves it redeemed in this process, the safe side for a
   * single-use credential.
   */
  redeem(authorization: View<DeviceAuthorization>): { redeemed: false } | { redeemed: true; written: Promise<unknown> } {
    const record = this.byId.get(authorization.id);
    if (!record || record.state !== 'approved') return { redeemed: false };
    record.state = 'redeemed';
    this.pace.delete(record.id);
    // The store decides between threads: one redemption claims the approved authorization.
    const claim = this.storage.decisions.claimOnce(this.storage.stores.deviceAuthorizations, record.id, (stored: DeviceAuthorization) =>
      stored.state === 'approved' ? { ...stored, state: 'redeemed' as const } : undefined,
    );
    return { redeemed: true, written: this.storage.durable(mustWin(claim.then((c) => c.claimed), 'device code')) };
  }

  async sweep(now = clock.now()): Promise<number> {
    const writes: Promise<boolean>[] = [];
    for (const record of this.byId.values()) {
      if (record.exp + KEPT_AFTER_EXPIRY_MS <= now) {
        this.forget(record);
        writes.push(this.storage.stores.deviceAuthorizations.remove(record.id));
      } else if (record.exp <= now) {
        this.pace.delete(record.id);
      }
    }
    await Promise.all(writes);
    return writes.length;
  }
}

/** The record if it still waits for the person's answer and has not expired. */
function pendingAt(record: DeviceAuthorization | undefined, now: number): DeviceAuthorization | undefined {
  return record && record.state === 'pending' && record.exp > now ? record : undefined;
}
