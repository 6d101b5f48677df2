import { stampEvents, type Editor, type EventDraft, type NewEvent } from '../model/activity.js';
import { log } from '../util/log.js';
import { recordKind, type RecordWrite, type StorePort } from '../storage/store-port.js';
import { newUniqueId, newOpaqueToken } from '../util/ids.js';
import { sha256Base64url } from '../util/hash.js';
import { amrOf, type AuthChecks, type SecondFactorKind } from '../model/auth-checks.js';
import { clock } from '../util/clock.js';
import type { View } from '../util/readonly.js';

/**
 * Owns user-agent sessions. The browser holds a cookie with 256 random bits; Sesame stores only
 * its SHA-256 (the agent id), mapped to one or more user sessions: one per user signed in on that
 * browser, each with its `sid`, `auth_time` and authentication methods (`amr`).
 */
export interface UserSession {
  /** OIDC `sid`. */
  id: string;
  agentId: string;
  userId: string;
  /** Unix seconds of the last active authentication. */
  authTime: number;
  amr: string[];
  /** Unix seconds of the last password check (absent in sessions older than this field: `authTime`). */
  passwordCheckedAt?: number;
  /** Unix seconds of the last TOTP check (absent: `authTime` when `amr` has `otp`). */
  secondFactorCheckedAt?: number;
  /** Unix seconds of the last sign-in at an identity provider, and which one. */
  idpCheckedAt?: number;
  idpId?: string;
  /** Unix seconds of the last passkey sign-in. */
  passwordlessCheckedAt?: number;
  /** What the last second factor was (absent: a code). */
  secondFactorKind?: SecondFactorKind;
  createdAt: number;
  lastActiveAt: number;
  /**
   * The apps (client ids) that received tokens in this session, in the order they first did: the
   * ones told by back-channel logout when it ends. Absent in sessions older than this field.
   */
  clients?: string[];
}

export function newAgentCookie(): string {
  return newOpaqueToken();
}

export function agentIdOf(cookie: string): string {
  return sha256Base64url(cookie);
}

// Not NUL: lmdb's key encoding reads NUL-separated strings back as arrays. Ids never hold '/'.
const SEP = '/';
/** Index keys: a session under its agent and under its user (prefix scans find them all). */
const agentKey = (agentId: string, sid: string) => `a${SEP}${agentId}${SEP}${sid}`;
const userKey = (userId: string, sid: string) => `u${SEP}${userId}${SEP}${sid}`;

const SESSIONS = recordKind<UserSession>('userSessions');
/** userSessions by agent and by user (`a/<agent id>/<sid>`, `u/<user id>/<sid>`), written with them. */
const SESSION_INDEX = recordKind<true>('sessionIndex');

/** A session's index entries (data dirs from before the index get them once, at start: src/compose.ts). */
export function sessionIndexEntries(s: UserSession): [key: string, value: true][] {
  return [
    [agentKey(s.agentId, s.id), true],
    [userKey(s.userId, s.id), true],
  ];
}

/** What the activity log says of a sign-in: who (and from where), to which app, in which org. */
export interface SignInRecord {
  by: Editor;
  clientId: string;
  orgId: string;
}

/**
 * Sessions live in the store, each change one decision on the record as it is then (so two
 * threads noting apps on one session, or one touching it while another ends it, lose nothing),
 * with the index by agent and by user written in the same transaction. Every HTTP thread reads
 * them there; a change is seen by all once durable, which is when its caller goes on.
 */
export class UserSessionsActor {
  constructor(
    private readonly store: StorePort,
    /** A session unused for this long is forgotten (the refresh idle lifetime). */
    private readonly idleLifetimeMs: number,
  ) {}

  private live(s: View<UserSession> | undefined, now = clock.now()): s is View<UserSession> {
    return s !== undefined && s.lastActiveAt + this.idleLifetimeMs > now;
  }

  async get(sid: string): Promise<View<UserSession> | undefined> {
    const s = await this.store.get(SESSIONS, sid);
    return this.live(s) ? s : undefined;
  }

  /** The sids under an index prefix. */
  private async sidsUnder(prefix: string): Promise<string[]> {
    return (await this.store.range(SESSION_INDEX, prefix)).map(({ key }) => key.slice(prefix.length));
  }

  /** The live sessions under an index prefix. */
  private async liveUnder(prefix: string): Promise<View<UserSession>[]> {
    const found = await Promise.all((await this.sidsUnder(prefix)).map((sid) => this.store.get(SESSIONS, sid)));
    const now = clock.now();
    return found.filter((s): s is UserSession => this.live(s, now));
  }

  /** The live sessions of a user agent, most recently authenticated first. */
  async ofAgent(agentId: string | undefined): Promise<View<UserSession>[]> {
    if (!agentId) return [];
    return (await this.liveUnder(agentKey(agentId, ''))).sort((a, b) => b.authTime - a.authTime);
  }

  /** The live sessions of a user, on every browser. */
  ofUser(userId: string): Promise<View<UserSession>[]> {
    return this.liveUnder(userKey(userId, ''));
  }

  /**
   * Changes a session as it is in the store when the change is made (`next`: its new form, null to
   * end it, undefined to leave it), its index entries with it; resolves once durable.
   */
  private change(sid: string, next: (current: UserSession | undefined) => UserSession | null | undefined, events: readonly NewEvent[] = []): Promise<UserSession | undefined> {
    return this.store.durable(
      this.store.update(SESSIONS, sid, next, (found, changed) => {
        const writes: RecordWrite[] = [];
        if (found && (changed === null || changed.agentId !== found.agentId)) writes.push({ kind: SESSION_INDEX, key: agentKey(found.agentId, sid), value: null });
        if (found && (changed === null || changed.userId !== found.userId)) writes.push({ kind: SESSION_INDEX, key: userKey(found.userId, sid), value: null });
        if (changed && changed.agentId !== found?.agentId) writes.push({ kind: SESSION_INDEX, key: agentKey(changed.agentId, sid), value: true });
        if (changed && changed.userId !== found?.userId) writes.push({ kind: SESSION_INDEX, key: userKey(changed.userId, sid), value: true });
        // Last: on PostgreSQL the log's appends take turns, held from the append to the commit.
        if (events.length > 0) writes.push({ activity: events });
        return writes;
      }),
    );
  }

  /**
   * Notes that an app received tokens in a session (it is then told when the session ends, by
   * back-channel logout). Resolves once durable; nothing is written when the app is already noted
   * or the session is gone (ended meanwhile: its tokens are revoked with it). Never rejects: it
   * runs beside the issuance of tokens whose code is already spent, which a failed note must not
   * turn into a lost answer; the failure is logged (that app then gets no logout).
   */
  async recordClient(sid: string, clientId: string): Promise<void> {
    try {
      const current = await this.store.get(SESSIONS, sid);
      if (!current || current.clients?.includes(clientId)) return;
      await this.change(sid, (s) => (!s || s.clients?.includes(clientId) ? undefined : { ...s, clients: [...(s.clients ?? []), clientId] }));
    } catch (error) {
      log.error('could not note the app on its session; it will not be told when the session ends', { sid, clientId, error: String(error) });
    }
  }

  /**
   * The browser got a new cookie (at sign-in, against session fixation): its sessions move to the
   * new agent id, and the old id opens nothing. Resolves once the moves are durable.
   */
  async moveAgent(previousAgentId: string, agentId: string): Promise<void> {
    if (previousAgentId === agentId) return;
    const previous = await this.sidsUnder(agentKey(previousAgentId, ''));
    await Promise.all(previous.map((sid) => this.change(sid, (s) => (s && s.agentId === previousAgentId ? { ...s, agentId } : undefined))));
  }

  /**
   * Records a successful authentication at `authTime` (Unix seconds: now, or the second after the
   * user's revocation horizon when that is now; domain/revocation-horizon.ts beginningAt): the
   * user's session on this agent is renewed, or a new one starts.
   */
  async signIn(agentId: string, userId: string, checks: AuthChecks, authTime: number, record?: SignInRecord): Promise<View<UserSession>> {
    const now = clock.now();
    const existing = (await this.ofAgent(agentId)).find((s) => s.userId === userId);
    const passed = {
      amr: amrOf(checks),
      passwordCheckedAt: checks.passwordAt,
      secondFactorCheckedAt: checks.secondFactorAt,
      secondFactorKind: checks.secondFactorKind,
      idpCheckedAt: checks.idpAt,
      idpId: checks.idpId,
      passwordlessCheckedAt: checks.passwordlessAt,
    };
    const sid = existing?.id ?? `V1_${newUniqueId()}`;
    // The sign-in's event, in the session's commit: the log shows the sign-ins that took place, no more.
    const event: EventDraft[] = record
      ? [
          {
            type: 'user.human.signed.in',
            aggregateType: 'user',
            aggregateId: userId,
            resourceOwner: record.orgId,
            objectId: sid,
            payload: { amr: passed.amr, clientId: record.clientId, sessionId: sid },
          },
        ]
      : [];
    const session = await this.change(
      sid,
      (current) =>
        // Renewed as it is now (its apps noted meanwhile stay); one ended meanwhile starts again under its id.
        current && current.agentId === agentId && current.userId === userId
          ? { ...current, authTime, ...passed, lastActiveAt: now }
          : { id: sid, agentId, userId, authTime, ...passed, createdAt: now, lastActiveAt: now },
      record ? stampEvents(event, record.by, now) : [],
    );
    return session!;
  }

  /** The checks a session passed, for sessions written before the check times were stored too. */
  checksOf(session: View<UserSession>): AuthChecks {
    return {
      passwordAt: session.passwordCheckedAt ?? (session.amr.includes('pwd') ? session.authTime : undefined),
      secondFactorAt: session.secondFactorCheckedAt ?? (session.amr.includes('otp') ? session.authTime : undefined),
      ...(session.idpCheckedAt !== undefined ? { idpAt: session.idpCheckedAt, idpId: session.idpId } : {}),
      ...(session.passwordlessCheckedAt !== undefined ? { passwordlessAt: session.passwordlessCheckedAt } : {}),
      ...(session.secondFactorKind !== undefined ? { secondFactorKind: session.secondFactorKind } : {}),
    };
  }

  /**
   * Marks a session used by a silent (SSO) authorization, which keeps it from idling out. Written
   * at most hourly: the idle lifetime is counted in days, and SSO is a hot path.
   */
  touch(session: View<UserSession>, now = clock.now()): void {
    // The caller's view is at most a request old: written at most hourly, decided on the row as it is then.
    if (now - session.lastActiveAt < 3_600_000) return;
    void this.change(session.id, (s) => (s && now - s.lastActiveAt >= 3_600_000 ? { ...s, lastActiveAt: now } : undefined)).catch(() => undefined);
  }

  /**
   * Ends sessions; resolves once the removal is durable. `signedOutFrom`: a sign-out (the person's
   * browser asked), logged with each session's end in its commit (an end an administrator's change
   * causes is that change's event).
   */
  async end(sessions: readonly View<UserSession>[], signedOut?: { address: string | undefined; orgOf: (userId: string) => string }): Promise<void> {
    const now = clock.now();
    await Promise.all(
      sessions.map((s) => {
        const events = signedOut
          ? stampEvents(
              [{ type: 'user.human.signed.out', aggregateType: 'user', aggregateId: s.userId, resourceOwner: signedOut.orgOf(s.userId), objectId: s.id, payload: { sessionId: s.id } }],
              { userId: s.userId, service: 'login', address: signedOut.address },
              now,
            )
          : [];
        return this.change(s.id, (current) => (current ? null : undefined), events);
      }),
    );
  }

  /** Forgets idle sessions, with their index entries (one used meanwhile, on any thread, stays). */
  sweep(now = clock.now()): Promise<number> {
    return this.store.sweep(
      SESSIONS,
      (s) => !this.live(s, now),
      (sid, s) => [
        { kind: SESSION_INDEX, key: agentKey(s.agentId, sid), value: null },
        { kind: SESSION_INDEX, key: userKey(s.userId, sid), value: null },
      ],
    );
  }
}
