import { log } from '../util/log.js';
import type { Storage } from '../storage/db.js';
import { Table } from '../storage/table.js';
import { newId, newOpaqueToken } from '../util/ids.js';
import { sha256Base64url } from '../util/hash.js';
import { amrOf, type AuthChecks } from '../model/auth-checks.js';
import { clock } from '../util/clock.js';
import { ownRow, type View } from '../util/readonly.js';

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

export class UserSessionsActor {
  private readonly sessions: Table<UserSession>;
  private readonly byAgent = new Map<string, Set<string>>();
  /** Session ids per user, for ending all of a user's sessions (deactivated, locked, deleted, password set). */
  private readonly byUser = new Map<string, Set<string>>();

  constructor(
    storage: Storage,
    /** A session unused for this long is forgotten (the refresh idle lifetime). */
    private readonly idleLifetimeMs: number,
  ) {
    this.sessions = new Table(storage.stores.userSessions, storage.durable);
    for (const s of this.sessions.values()) this.index(s);
  }

  private index(s: View<UserSession>): void {
    let set = this.byAgent.get(s.agentId);
    if (!set) this.byAgent.set(s.agentId, (set = new Set()));
    set.add(s.id);
    let ofUser = this.byUser.get(s.userId);
    if (!ofUser) this.byUser.set(s.userId, (ofUser = new Set()));
    ofUser.add(s.id);
  }

  private live(s: View<UserSession> | undefined, now = clock.now()): s is View<UserSession> {
    return s !== undefined && s.lastActiveAt + this.idleLifetimeMs > now;
  }

  get(sid: string): View<UserSession> | undefined {
    const s = this.sessions.get(sid);
    return this.live(s) ? s : undefined;
  }

  /** The live sessions of a user agent, most recently authenticated first. */
  ofAgent(agentId: string | undefined): View<UserSession>[] {
    if (!agentId) return [];
    const ids = this.byAgent.get(agentId);
    if (!ids) return [];
    const out: View<UserSession>[] = [];
    for (const id of ids) {
      const s = this.sessions.get(id);
      if (this.live(s)) out.push(s);
    }
    return out.sort((a, b) => b.authTime - a.authTime);
  }

  /** The live sessions of a user, on every browser. */
  ofUser(userId: string): View<UserSession>[] {
    const ids = this.byUser.get(userId);
    if (!ids) return [];
    const out: View<UserSession>[] = [];
    for (const id of ids) {
      const s = this.sessions.get(id);
      if (this.live(s)) out.push(s);
    }
    return out;
  }

  /**
   * Notes that an app received tokens in a session (it is then told when the session ends, by
   * back-channel logout). Resolves once durable; nothing is written when the app is already noted
   * or the session is gone (ended meanwhile: its tokens are revoked with it). Never rejects: it
   * runs beside the issuance of tokens whose code is already spent, which a failed note must not
   * turn into a lost answer; the failure is logged (that app then gets no logout).
   */
  async recordClient(sid: string, clientId: string): Promise<void> {
    const current = this.sessions.get(sid);
    if (!current || current.clients?.includes(clientId)) return;
    try {
      await this.sessions.put({ ...ownRow<UserSession>(current), clients: [...(current.clients ?? []), clientId] });
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
    const previous = this.ofAgent(previousAgentId);
    this.byAgent.delete(previousAgentId);
    try {
      await Promise.all(previous.map((s) => this.put({ ...ownRow<UserSession>(s), agentId })));
    } finally {
      // A move whose write failed is taken back by the table: index the row where it is again.
      this.reindex(previous.map((s) => s.id));
    }
  }

  /**
   * Records a successful authentication at `authTime` (Unix seconds: now, or the second after the
   * user's revocation horizon when that is now; domain/revocation-horizon.ts beginningAt): the
   * user's session on this agent is renewed, or a new one starts.
   */
  async signIn(agentId: string, userId: string, checks: AuthChecks, authTime: number): Promise<View<UserSession>> {
    const now = clock.now();
    const existing = this.ofAgent(agentId).find((s) => s.userId === userId);
    const passed = { amr: amrOf(checks), passwordCheckedAt: checks.passwordAt, secondFactorCheckedAt: checks.secondFactorAt };
    const session: UserSession = existing
      ? { ...ownRow<UserSession>(existing), authTime, ...passed, lastActiveAt: now }
      : { id: `V1_${newId()}`, agentId, userId, authTime, ...passed, createdAt: now, lastActiveAt: now };
    await this.put(session);
    return session;
  }

  /** The checks a session passed, for sessions written before the check times were stored too. */
  checksOf(session: View<UserSession>): AuthChecks {
    return {
      passwordAt: session.passwordCheckedAt ?? (session.amr.includes('pwd') ? session.authTime : undefined),
      secondFactorAt: session.secondFactorCheckedAt ?? (session.amr.includes('otp') ? session.authTime : undefined),
    };
  }

  /** Indexes the rows (of these ids) the table holds now under their agent. */
  private reindex(ids: readonly string[]): void {
    for (const id of ids) {
      const row = this.sessions.get(id);
      if (row) this.index(row);
    }
  }

  private put(session: UserSession): Promise<boolean> {
    this.index(session);
    return this.sessions.put(session).catch((error: unknown) => {
      // Not written (and taken back): the agent's index no longer names it unless the row is there.
      if (this.sessions.get(session.id)?.agentId !== session.agentId) this.byAgent.get(session.agentId)?.delete(session.id);
      throw error;
    });
  }

  /**
   * Marks a session used by a silent (SSO) authorization, which keeps it from idling out. Written
   * at most hourly: the idle lifetime is counted in days, and SSO is a hot path.
   */
  touch(session: View<UserSession>, now = clock.now()): void {
    // The row as it is now: the caller's view may be of a session ended or moved since.
    const current = this.sessions.get(session.id);
    if (!current || now - current.lastActiveAt < 3_600_000) return;
    void this.sessions.put({ ...ownRow<UserSession>(current), lastActiveAt: now }).catch(() => undefined);
  }

  /** Ends sessions; resolves once the removal is durable. */
  async end(sessions: readonly View<UserSession>[]): Promise<void> {
    const writes: Promise<boolean>[] = [];
    for (const s of sessions) {
      this.byAgent.get(s.agentId)?.delete(s.id);
      const ofUser = this.byUser.get(s.userId);
      ofUser?.delete(s.id);
      if (ofUser?.size === 0) this.byUser.delete(s.userId);
      writes.push(this.sessions.remove(s.id));
    }
    try {
      await Promise.all(writes);
    } finally {
      // A removal whose write failed is taken back by the table: its agent finds it again.
      this.reindex(sessions.map((s) => s.id));
    }
  }

  async sweep(now = clock.now()): Promise<number> {
    const expired = [...this.sessions.values()].filter((s) => !this.live(s, now));
    await this.end(expired);
    return expired.length;
  }
}
