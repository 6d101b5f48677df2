/**
 * The in-memory storage the bench's oidc-provider peer runs on: the semantics of oidc-provider's
 * own memory adapter (lib/adapters/memory_adapter.js: one instance per model, expiry, the session
 * `uid` and `userCode` lookups, tokens grouped by grant for `revokeByGrantId`, `consume`), without
 * its two bench-breaking traits:
 * - a 1,000-entry LRU bound: a run evicted most of a 2,000-token introspection pool (answered
 *   inactive, the cheap path), the revocation pool and the signed-in session;
 * - a grant's member list rewritten in full (with a `Math.max` over every member) at each token
 *   issued under it: the browser-flow scenarios issue every code and refresh token under the one
 *   grant of the person signed in, which made each request cost in proportion to the run so far.
 * Here every operation is a constant number of Map operations, so the peer pays for the protocol,
 * not for its development storage.
 */
interface Entry {
  payload: Record<string, unknown>;
  /** Epoch ms, or Infinity. */
  expiresAt: number;
}

const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);

export class PeerStore {
  readonly entries = new Map<string, Entry>();
  readonly sessionsByUid = new Map<string, string>();
  readonly byUserCode = new Map<string, string>();
  /** grantId → keys of the tokens issued under it. */
  readonly grants = new Map<string, Set<string>>();

  live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }
}

export class PeerAdapter {
  constructor(
    private readonly model: string,
    private readonly store: PeerStore,
  ) {}

  private key(id: string): string {
    return `${this.model}:${id}`;
  }

  async upsert(id: string, payload: Record<string, unknown>, expiresIn?: number): Promise<void> {
    const key = this.key(id);
    const previous = this.store.entries.get(key);
    if (previous) this.unindex(id, key, previous.payload);
    this.store.entries.set(key, { payload, expiresAt: typeof expiresIn === 'number' ? Date.now() + expiresIn * 1000 : Infinity });
    if (this.model === 'Session' && typeof payload.uid === 'string') this.store.sessionsByUid.set(payload.uid, id);
    if (typeof payload.userCode === 'string') this.store.byUserCode.set(payload.userCode, id);
    if (GRANTABLE.has(this.model) && typeof payload.grantId === 'string') {
      let members = this.store.grants.get(payload.grantId);
      if (!members) this.store.grants.set(payload.grantId, (members = new Set()));
      members.add(key);
    }
  }

  async find(id: string): Promise<Record<string, unknown> | undefined> {
    return this.store.live(this.key(id))?.payload;
  }

  async findByUid(uid: string): Promise<Record<string, unknown> | undefined> {
    const id = this.store.sessionsByUid.get(uid);
    return id === undefined ? undefined : this.find(id);
  }

  async findByUserCode(userCode: string): Promise<Record<string, unknown> | undefined> {
    const id = this.store.byUserCode.get(userCode);
    return id === undefined ? undefined : this.find(id);
  }

  async consume(id: string): Promise<void> {
    const entry = this.store.live(this.key(id));
    if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
  }

  async destroy(id: string): Promise<void> {
    const key = this.key(id);
    const entry = this.store.entries.get(key);
    this.store.entries.delete(key);
    if (entry) this.unindex(id, key, entry.payload);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    const members = this.store.grants.get(grantId);
    if (!members) return;
    for (const key of members) {
      const entry = this.store.entries.get(key);
      this.store.entries.delete(key);
      if (entry) this.unindexLookups(key.slice(key.indexOf(':') + 1), entry.payload);
    }
    this.store.grants.delete(grantId);
  }

  private unindex(id: string, key: string, payload: Record<string, unknown>): void {
    this.unindexLookups(id, payload);
    if (typeof payload.grantId === 'string') this.store.grants.get(payload.grantId)?.delete(key);
  }

  /** Drops the lookups that still lead to this entry (another entry may have taken the uid or user code since). */
  private unindexLookups(id: string, payload: Record<string, unknown>): void {
    if (typeof payload.uid === 'string' && this.store.sessionsByUid.get(payload.uid) === id) this.store.sessionsByUid.delete(payload.uid);
    if (typeof payload.userCode === 'string' && this.store.byUserCode.get(payload.userCode) === id) this.store.byUserCode.delete(payload.userCode);
  }
}
