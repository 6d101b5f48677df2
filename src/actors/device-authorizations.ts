import { createHmac } from 'node:crypto';
import { mustWin } from '../storage/decisions.js';
import { recordKind, type StorePort } from '../storage/store-port.js';
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

const AUTHORIZATIONS = recordKind<DeviceAuthorization>('deviceAuthorizations');
/** Device authorizations by client and expiry (the per-client bound), and by user code key. */
const INDEX = recordKind<string>('deviceAuthorizationIndex');

/** An authorization's index entries (data dirs from before the index get them once, at start: src/app.ts). */
export function deviceIndexEntries(r: DeviceAuthorization): [key: string, value: string][] {
  return [
    [`u/${r.userCodeKey}`, r.id],
    [expiryKey(sha256Base64url(r.clientId), r.exp, r.id), r.id],
  ];
}

export class DeviceAuthorizationsActor {
  private readonly userCodeKey: Buffer;

  constructor(
    private readonly store: StorePort,
    masterKey: MasterKey,
    private readonly rules: DeviceFlowRules,
  ) {
    this.userCodeKey = masterKey.deriveKey('device-user-code');
  }

  private keyOfUserCode(userCode: string): string {
    return createHmac('sha256', this.userCodeKey).update(userCode).digest('base64url');
  }

  private async get(id: string | undefined): Promise<DeviceAuthorization | undefined> {
    return id === undefined ? undefined : this.store.get(AUTHORIZATIONS, id);
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
    const max = this.rules.maxRecordsPerClient;
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
      // A user code must name one authorization: drawn again on a (rare) clash with a kept one.
      const userCodeEntry = `u/${record.userCodeKey}`;
      const outcome = await this.store.durable(
        this.store.insertGuarded({ absent: [{ kind: INDEX, key: userCodeEntry }], atMost: { kind: INDEX, range: live, max } }, [
          { kind: INDEX, key: userCodeEntry, value: record.id },
          { kind: INDEX, key: expiryKey(client, record.exp, record.id), value: record.id },
          { kind: AUTHORIZATIONS, key: record.id, value: record },
        ]),
      );
      if (outcome === 'full') throw new TooManyDeviceAuthorizations();
      if (outcome === 'written') return { deviceCode, userCode, expiresAt: record.exp };
    }
  }

  /** The pending, unexpired authorization a user code (canonical form) names. */
  async pendingByUserCode(userCode: string, now = clock.now()): Promise<View<DeviceAuthorization> | undefined> {
    return pendingAt(await this.get(await this.store.get(INDEX, `u/${this.keyOfUserCode(userCode)}`)), now);
  }

  /** A pending, unexpired authorization by id (a sign-in on the device page carries the id). */
  async pending(id: string, now = clock.now()): Promise<View<DeviceAuthorization> | undefined> {
    return pendingAt(await this.get(id), now);
  }

  /** The authorization of a device code, whatever its state (expired ones until they are swept). */
  byDeviceCode(deviceCode: string): Promise<View<DeviceAuthorization> | undefined> {
    return this.get(sha256Base64url(deviceCode));
  }

  /**
   * A poll of the token endpoint: `slow_down` when it came before the interval was up, which then
   * grows by 5 seconds (RFC 8628 §3.5); decided on the record as stored, so parallel polls on any
   * threads slow each other down. Committed, not synced: a crash forgets at most one poll's pace.
   */
  async poll(authorization: View<DeviceAuthorization>, now = clock.now()): Promise<'ok' | 'slow_down'> {
    let early = false;
    await this.store.update(AUTHORIZATIONS, authorization.id, (record) => {
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
    const { claimed } = await this.store.durable(this.store.claimOnce(AUTHORIZATIONS, authorization.id, (record) => (pendingAt(record, now) ? { ...record, ...change } : undefined)));
    return claimed;
  }

  /**
   * Redeems an approved authorization: `written` rejects with DecidedElsewhere for every
   * redemption (on any thread) but the one the store let through.
   */
  redeem(authorization: View<DeviceAuthorization>): { redeemed: false } | { redeemed: true; written: Promise<unknown> } {
    if (authorization.state !== 'approved') return { redeemed: false };
    const claim = this.store.claimOnce(AUTHORIZATIONS, authorization.id, (stored) => (stored.state === 'approved' ? { ...stored, state: 'redeemed' as const } : undefined));
    return {
      redeemed: true,
      written: this.store.durable(
        mustWin(
          claim.then((c) => c.claimed),
          'device code',
        ),
      ),
    };
  }

  /** Removes records some minutes after they expired (with their index entries). */
  sweep(now = clock.now()): Promise<number> {
    // The user code's entry is this record's: a start never takes a user code while it is held.
    return this.store.durable(
      this.store.sweep(
        AUTHORIZATIONS,
        (r) => r.exp + KEPT_AFTER_EXPIRY_MS <= now,
        (_id, r) => deviceIndexEntries(r).map(([key]) => ({ kind: INDEX, key, value: null })),
      ),
    );
  }
}

/** The record if it still waits for the person's answer and has not expired. */
function pendingAt(record: DeviceAuthorization | undefined, now: number): DeviceAuthorization | undefined {
  return record && record.state === 'pending' && record.exp > now ? record : undefined;
}
