import { createHmac } from 'node:crypto';
import type { Storage } from '../storage/db.js';
import { buildIndexOnce } from '../storage/index-once.js';
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
 * denies it in the browser, then redeemed once by the device. They live in the store, so any
 * HTTP thread starts, shows, decides, paces and redeems them: each change is one decision on the
 * record as stored then, and resolves once durable. Records stay on disk across restarts until
 * some minutes after they expired, so a late poll still gets `expired_token` and a second
 * redemption `invalid_grant` rather than an unknown code.
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
  /** When the device may poll next (ms) and its interval now: the pace of `poll`. */
  nextPollAt?: number;
  intervalMs?: number;
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

/** Index keys: a client's authorizations by expiry (`<client digest>/<exp>/<id>`), user codes by their key (`u/<key>`). */
const expiryKey = (client: string, exp: number, id: string) => `${client}/${String(exp).padStart(15, '0')}/${id}`;

export class DeviceAuthorizationsActor {
  private readonly db: Storage['stores']['deviceAuthorizations'];
  private readonly index: Storage['stores']['deviceAuthorizationIndex'];
  private readonly userCodeKey: Buffer;

  constructor(
    private readonly storage: Storage,
    masterKey: MasterKey,
    private readonly rules: DeviceFlowRules,
  ) {
    this.userCodeKey = masterKey.deriveKey('device-user-code');
    this.db = storage.stores.deviceAuthorizations;
    this.index = storage.stores.deviceAuthorizationIndex;
    // Data dirs from before the index: built once.
    buildIndexOnce(this.db, this.index, (r: DeviceAuthorization) => [
      [`u/${r.userCodeKey}`, r.id],
      [expiryKey(sha256Base64url(r.clientId), r.exp, r.id), r.id],
    ]);
  }

  private keyOfUserCode(userCode: string): string {
    return createHmac('sha256', this.userCodeKey).update(userCode).digest('base64url');
  }

  private get(id: string | undefined): DeviceAuthorization | undefined {
    return id === undefined ? undefined : (this.db.get(id) as DeviceAuthorization | undefined);
  }

  /**
   * A new authorization; resolves with its codes once it is durable (before they are handed out).
   * One decision: the client's unexpired authorizations are counted against the bound (records
   * kept after their expiry for late polls do not count, so a burst holds a client up for a code's
   * lifetime at most), and the user code is taken unless another authorization has it.
   * PostgreSQL: INSERT … SELECT … WHERE (SELECT count(*) … exp > now) < max, the user code unique.
   */
  async start(request: DeviceRequest, now = clock.now()): Promise<{ deviceCode: string; userCode: string; expiresAt: number }> {
    const client = sha256Base64url(request.clientId);
    const live = { start: expiryKey(client, now + 1, ''), end: `${client}/\uffff` };
    for (;;) {
      const userCode = this.rules.newUserCode();
      const deviceCode = newOpaqueToken();
      const record: DeviceAuthorization = {
        ...request,
        id: sha256Base64url(deviceCode),
        userCodeKey: this.keyOfUserCode(userCode),
        exp: now + this.rules.lifetimeMs,
        state: 'pending',
        nextPollAt: now + this.rules.intervalMs,
        intervalMs: this.rules.intervalMs,
      };
      const outcome = await this.storage.durable(
        this.db.transaction(() => {
          // Counted natively; no range is read after it in this transaction (lmdb-js).
          if (this.index.getCount(live) >= this.rules.maxRecordsPerClient) return 'full' as const;
          // A user code must name one authorization: draw again on a (rare) clash with a kept one.
          if (this.index.get(`u/${record.userCodeKey}`) !== undefined) return 'clash' as const;
          void this.index.put(`u/${record.userCodeKey}`, record.id);
          void this.index.put(expiryKey(client, record.exp, record.id), record.id);
          void this.db.put(record.id, record);
          return 'started' as const;
        }),
      );
      if (outcome === 'full') throw new TooManyDeviceAuthorizations();
      if (outcome === 'started') return { deviceCode, userCode, expiresAt: record.exp };
    }
  }

  /** The pending, unexpired authorization a user code (canonical form) names. */
  pendingByUserCode(userCode: string, now = clock.now()): View<DeviceAuthorization> | undefined {
    return pendingAt(this.get(this.index.get(`u/${this.keyOfUserCode(userCode)}`) as string | undefined), now);
  }

  /** A pending, unexpired authorization by id (a sign-in on the device page carries the id). */
  pending(id: string, now = clock.now()): View<DeviceAuthorization> | undefined {
    return pendingAt(this.get(id), now);
  }

  /** The authorization of a device code, whatever its state (expired ones until they are swept). */
  byDeviceCode(deviceCode: string): View<DeviceAuthorization> | undefined {
    return this.get(sha256Base64url(deviceCode));
  }

  /**
   * A poll of the token endpoint: `slow_down` when it came before the interval was up, which then
   * grows by 5 seconds (RFC 8628 §3.5); decided on the record as stored, so parallel polls on any
   * threads slow each other down. Committed, not synced: a crash forgets at most one poll's pace.
   */
  async poll(authorization: View<DeviceAuthorization>, now = clock.now()): Promise<'ok' | 'slow_down'> {
    let early = false;
    await this.storage.decisions.update(this.db, authorization.id, (record: DeviceAuthorization | undefined) => {
      if (!record) return undefined;
      const intervalMs = record.intervalMs ?? this.rules.intervalMs;
      early = now < (record.nextPollAt ?? 0);
      const next = early ? intervalMs + this.rules.slowDownStepMs : intervalMs;
      return { ...record, intervalMs: next, nextPollAt: now + next };
    });
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
    const { claimed } = await this.storage.durable(
      this.storage.decisions.claimOnce(this.db, authorization.id, (record: DeviceAuthorization) => (pendingAt(record, now) ? { ...record, ...change } : undefined)),
    );
    return claimed;
  }

  /**
   * Redeems an approved authorization: `written` rejects with DecidedElsewhere for every
   * redemption (on any thread) but the one the store let through.
   */
  redeem(authorization: View<DeviceAuthorization>): { redeemed: false } | { redeemed: true; written: Promise<unknown> } {
    if (authorization.state !== 'approved') return { redeemed: false };
    const claim = this.storage.decisions.claimOnce(this.db, authorization.id, (stored: DeviceAuthorization) =>
      stored.state === 'approved' ? { ...stored, state: 'redeemed' as const } : undefined,
    );
    return { redeemed: true, written: this.storage.durable(mustWin(claim.then((c) => c.claimed), 'device code')) };
  }

  /** Removes records some minutes after they expired (with their index entries). */
  async sweep(now = clock.now()): Promise<number> {
    const gone = [...this.db.getRange()].map(({ value }) => value as DeviceAuthorization).filter((r) => r.exp + KEPT_AFTER_EXPIRY_MS <= now);
    if (gone.length === 0) return 0;
    await this.storage.durable(
      this.db.transaction(() => {
        for (const r of gone) {
          void this.db.remove(r.id);
          void this.index.remove(expiryKey(sha256Base64url(r.clientId), r.exp, r.id));
          if (this.index.get(`u/${r.userCodeKey}`) === r.id) void this.index.remove(`u/${r.userCodeKey}`);
        }
      }),
    );
    return gone.length;
  }
}

/** The record if it still waits for the person's answer and has not expired. */
function pendingAt(record: DeviceAuthorization | undefined, now: number): DeviceAuthorization | undefined {
  return record && record.state === 'pending' && record.exp > now ? record : undefined;
}
