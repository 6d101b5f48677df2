import type { Editor } from '../model/activity.js';
import { WriteConflict } from '../model/errors.js';
import { createPublicKey, generateKeyPair, type JsonWebKey as NodeJsonWebKey, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import type { SigningAlg } from '../config.js';
import type { MasterKey } from '../crypto/master-key.js';
import { newId } from '../util/ids.js';
import { log } from '../util/log.js';
import { importPkcs8 } from '../crypto/jws-signature.js';
import type { ActiveSigningKey } from '../workers/signer.js';
import { clock } from '../util/clock.js';
import { KeyedQueue } from '../util/keyed-queue.js';
import type { DirectoryReader } from '../storage/directory-reader.js';
import type { DirectoryWrites, RowWrite } from '../storage/directory-writes.js';

/**
 * Owns the signing keys. Three roles at any time:
 * - `active`: signs every new token;
 * - `next`: published in the JWKS for a whole rotation interval before it signs anything, so
 *   clients that cache the JWKS already hold it when the first token with its kid arrives;
 * - `retired`: no longer signs, but stays published until every token it signed has expired.
 * Private parts are stored encrypted with the master key.
 */
type KeyStatus = 'active' | 'next' | 'retired';

interface StoredKey {
  kid: string;
  alg: SigningAlg;
  status: KeyStatus;
  createdAt: number;
  activatedAt?: number;
  /** For retired keys: when the last token it signed expires, after which it leaves the JWKS. */
  publishUntil?: number;
  publicJwk: Record<string, unknown>;
  sealedPrivateKey: Uint8Array;
}

export interface VerificationKey {
  kid: string;
  alg: SigningAlg;
  publicKey: KeyObject;
}

export const JWKS_MAX_AGE_SECONDS = 300;

const generateKeyPairAsync = promisify(generateKeyPair);

export interface GeneratedKey {
  privateDer: Buffer;
  publicKey: KeyObject;
}
export type KeyGenerator = (alg: SigningAlg) => Promise<GeneratedKey>;

/** Off the event loop (libuv's thread pool): an RSA key takes tens to hundreds of milliseconds. */
export async function generateSigningKey(alg: SigningAlg): Promise<GeneratedKey> {
  const pair =
    alg === 'RS256' ? await generateKeyPairAsync('rsa', { modulusLength: 2048 }) : alg === 'ES256' ? await generateKeyPairAsync('ec', { namedCurve: 'P-256' }) : await generateKeyPairAsync('ed25519');
  return { privateDer: pair.privateKey.export({ format: 'der', type: 'pkcs8' }), publicKey: pair.publicKey };
}

/** What signing needs, derived from one key set: replaced as a whole, never piecemeal. */
interface KeyView {
  keys: ReadonlyMap<string, StoredKey>;
  active: ActiveSigningKey;
  verification: Map<string, VerificationKey>;
  jwksBody: string;
}

function byStatusIn(keys: ReadonlyMap<string, StoredKey>, status: KeyStatus): StoredKey[] {
  return [...keys.values()].filter((k) => k.status === status);
}

/** After a failed rotation by the timer, the next attempt waits this long (not a busy loop). */
const RETRY_AFTER_FAILURE_MS = 60_000;

/** Tries per key set change: one that keeps meeting newer ones is refused after these. */
const MOST_CHANGE_TRIES = 8;

/** A key set's identity: its keys and their states (what a change was computed from). */
function fingerprint(keys: ReadonlyMap<string, StoredKey>): string {
  return [...keys.values()]
    .map((key) => `${key.kid}:${key.status}:${key.publishUntil ?? ''}`)
    .sort()
    .join(',');
}

/**
 * The key set's version, a row of the `meta` store every change moves: a change is written only if
 * the set is still at the version it was computed from (a compare-and-set on the whole set).
 */
export const KEY_SET_VERSION = 'signingKeySet';
interface KeySetVersion {
  sequence: number;
}

export class KeysActor {
  /** The algorithm of the key a signing-key store signs with now, if any (read before an actor exists). */
  static activeAlg(reader: Pick<DirectoryReader, 'rows'>): SigningAlg | undefined {
    for (const value of reader.rows<StoredKey>('signingKeys')) if (value.status === 'active') return value.alg;
    return undefined;
  }

  /**
   * The key set and what is derived from it. A change computes a new set (the stored records are
   * never modified in place), writes it durably, and only then replaces this in one assignment:
   * a failed write leaves the keys, the JWKS and the signing key exactly as they were.
   */
  private view: KeyView = { keys: new Map(), active: undefined as unknown as ActiveSigningKey, verification: new Map(), jwksBody: '{"keys":[]}' };
  /** Key set changes run one after another, each on the set the previous one left. */
  private readonly changes = new KeyedQueue();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    /** How the key set is read (the `signingKeys` store and its version in `meta`). */
    private readonly reader: DirectoryReader,
    /** How a new key set is written: one commit the store decides, logged for the other copies. */
    private readonly writes: DirectoryWrites,
    private readonly masterKey: MasterKey,
    private readonly alg: SigningAlg,
    private readonly rotationIntervalMs: number,
    /** Longest lifetime of anything a key signs: how long a retired key must stay published. */
    private readonly maxTokenLifetimeMs: number,
    /** Waits until a write is synced: a key must be on disk before anything it signs leaves. */
    private readonly durable: <R>(write: Promise<R>) => Promise<R> = (write) => write,
    /** Where new key pairs come from (tests hand in keys made once, so a server starts in milliseconds). */
    private readonly generate: KeyGenerator = generateSigningKey,
  ) {}

  async start(): Promise<void> {
    const stored = this.stored();
    const active = byStatusIn(stored, 'active')[0];
    const next = byStatusIn(stored, 'next')[0];
    if (!active || active.alg !== this.alg) {
      // First start, or the operator changed the algorithm: a key of the configured algorithm
      // must sign from now on.
      await this.change((current) => this.rotation(current, true));
    } else if (!next || next.alg !== this.alg) {
      await this.change(async (current) => {
        const upcoming = byStatusIn(current, 'next')[0];
        if (upcoming && upcoming.alg === this.alg) return undefined;
        const fresh = await this.newKey('next');
        const keys = new Map(current);
        if (upcoming) keys.delete(upcoming.kid);
        return keys.set(fresh.kid, fresh);
      });
    } else {
      this.view = this.derive(stored);
    }
    this.scheduleRotation();
  }

  /**
   * Takes the key set as stored, to sign and verify with: an HTTP acceptor thread's, loaded again
   * whenever the change feed names the set (the main thread's actor rotates on its timer; any
   * thread's rotates on an administrator's call, see change).
   */
  load(): void {
    this.view = this.derive(this.stored());
  }

  /** The key set as stored, by kid. */
  private stored(): Map<string, StoredKey> {
    const stored = new Map<string, StoredKey>();
    for (const value of this.reader.rows<StoredKey>('signingKeys')) stored.set(value.kid, value);
    return stored;
  }

  /** Whether this process may rotate now (the timer asks first; default: always). */
  private mayRotate: () => Promise<boolean> = () => Promise.resolve(true);

  /**
   * Rotates on the timer only while `held()` says so: of several processes on one store (later, the
   * nodes on one database), the one holding the rotation lease; the others look again later.
   */
  rotateOnlyWhile(held: () => Promise<boolean>): void {
    this.mayRotate = held;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** The key new tokens are signed with. */
  signingKey(): ActiveSigningKey {
    return this.view.active;
  }

  verificationKey(kid: string): VerificationKey | undefined {
    return this.view.verification.get(kid);
  }

  /** The precomputed JWKS document. */
  jwks(): string {
    return this.view.jwksBody;
  }

  /**
   * Promotes the next key to active, retires the active one and publishes a new next key.
   * `immediate` also replaces the next key (used when the configured algorithm changed).
   */
  async rotate(immediate = false, by?: Editor): Promise<{ kid: string }> {
    const kid = (await this.change((current) => this.rotation(current, immediate), by))!;
    log.info('signing key rotated', { kid, alg: this.alg });
    return { kid };
  }

  /**
   * Runs one key set change after the ones before it: `compute` builds the new set from the set as
   * stored (another thread or process may have changed it since this one loaded it) without
   * touching it (undefined: no change), the set is written durably, and only then applied. The
   * write is a compare-and-set: a set changed meanwhile (a rotation on another thread) refuses it,
   * and the change is computed again from the set as stored then, so two rotations at once both
   * land, one after the other, and a rotation that came due is made once.
   */
  private change(compute: (current: ReadonlyMap<string, StoredKey>) => Promise<Map<string, StoredKey> | undefined>, by?: Editor): Promise<string | undefined> {
    const run = async () => {
      for (let tries = 1; ; tries++) {
        const version = this.reader.get<KeySetVersion>('meta', KEY_SET_VERSION);
        const current = this.stored();
        const keys = await compute(current);
        if (!keys) {
          // Nothing to change; the set as stored is the one to sign with (another thread's change
          // taken in; derived again only then: it decrypts the signing key).
          if (fingerprint(current) !== fingerprint(this.view.keys)) this.view = this.derive(current);
          return undefined;
        }
        // Derived before the write: nothing that could fail is left once the write is durable.
        const view = this.derive(keys);
        // The store becomes exactly this set (a handful of keys), only if the set is still at the
        // version it was computed from: a set changed meanwhile (or an earlier write whose outcome
        // was unknown: committed, but its sync failed) moved the version.
        const rows: RowWrite[] = [
          ...[...current.values()].filter((key) => !keys.has(key.kid)).map((key) => ({ store: 'signingKeys' as const, id: key.kid, value: null, base: key })),
          ...[...keys.values()].map((key) => ({ store: 'signingKeys' as const, id: key.kid, value: key, base: current.get(key.kid) })),
          { store: 'meta', id: KEY_SET_VERSION, value: { sequence: (version?.sequence ?? 0) + 1 } satisfies KeySetVersion, base: version },
        ];
        try {
          await this.durable(this.writes.commit({ rows, by }));
        } catch (error) {
          if (!(error instanceof WriteConflict) || tries >= MOST_CHANGE_TRIES) throw error;
          // Read again as committed: this copy may predate the change that came first.
          await this.reader.reload(['signingKeys', 'meta']);
          continue;
        }
        this.view = view;
        return view.active.kid;
      }
    };
    return this.changes.run('key set', run);
  }

  /** The key set after a rotation of `current` (which is left as it is). */
  private async rotation(current: ReadonlyMap<string, StoredKey>, immediate: boolean): Promise<Map<string, StoredKey>> {
    const upcoming = byStatusIn(current, 'next')[0];
    const replace = immediate || !upcoming || upcoming.alg !== this.alg;
    // Generated off the event loop before anything is decided.
    const next = await this.newKey('next');
    const replacement = replace ? await this.newKey('active') : undefined;
    const now = clock.now();
    const keys = new Map(current);
    for (const key of byStatusIn(current, 'active')) {
      keys.set(key.kid, { ...key, status: 'retired', publishUntil: now + this.maxTokenLifetimeMs + 60_000 });
    }
    if (replacement && upcoming) keys.delete(upcoming.kid);
    const promoted: StoredKey = { ...(replacement ?? upcoming!), status: 'active', activatedAt: now };
    keys.set(promoted.kid, promoted);
    keys.set(next.kid, next);
    for (const key of byStatusIn(keys, 'retired')) {
      if ((key.publishUntil ?? 0) <= now) keys.delete(key.kid);
    }
    return keys;
  }

  private async newKey(status: KeyStatus): Promise<StoredKey> {
    const { privateDer, publicKey } = await this.generate(this.alg);
    const kid = newId();
    const key: StoredKey = {
      kid,
      alg: this.alg,
      status,
      createdAt: clock.now(),
      publicJwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: this.alg, use: 'sig' },
      sealedPrivateKey: this.masterKey.encrypt(privateDer),
    };
    return key;
  }

  private derive(keys: ReadonlyMap<string, StoredKey>): KeyView {
    const active = byStatusIn(keys, 'active')[0]!;
    const der = this.masterKey.decrypt(active.sealedPrivateKey);
    const verification = new Map([...keys.values()].map((k) => [k.kid, { kid: k.kid, alg: k.alg, publicKey: createPublicKey({ key: k.publicJwk as NodeJsonWebKey, format: 'jwk' }) }]));
    // Active first, then next, then retired: clients that take the first key get the right one.
    const order: Record<KeyStatus, number> = { active: 0, next: 1, retired: 2 };
    const published = [...keys.values()].sort((a, b) => order[a.status] - order[b.status]);
    return {
      keys,
      active: { kid: active.kid, alg: active.alg, privateKey: importPkcs8(der), privateKeyDer: der },
      verification,
      jwksBody: JSON.stringify({ keys: published.map((k) => k.publicJwk) }),
    };
  }

  private scheduleRotation(delayMs?: number): void {
    if (this.stopped) return;
    const active = byStatusIn(this.view.keys, 'active')[0]!;
    const due = (active.activatedAt ?? active.createdAt) + this.rotationIntervalMs;
    // Timers cap at ~24.8 days; check at least hourly so long intervals still fire.
    const delay = delayMs ?? Math.min(Math.max(due - clock.now(), 0), 3_600_000);
    this.timer = setTimeout(() => {
      // Another process holding the rotation lease rotates; this one looks again later.
      this.mayRotate()
        .then((held) => (held ? this.rotateIfDue().then(() => this.scheduleRotation()) : this.scheduleRotation(RETRY_AFTER_FAILURE_MS)))
        .catch((error: unknown) => {
          log.error('key rotation failed', { error: String(error) });
          // The key set is unchanged, so the rotation is still due: try again later, not at once.
          this.scheduleRotation(RETRY_AFTER_FAILURE_MS);
        });
    }, delay);
    this.timer.unref();
  }

  /** Rotates when the active key has signed for a whole interval (the timer's check; tests call it after moving the clock). */
  async rotateIfDue(): Promise<boolean> {
    // Decided in turn with other changes, so the timer and a tick at once rotate only once.
    const kid = await this.change(async (current) => {
      const active = byStatusIn(current, 'active')[0]!;
      if ((active.activatedAt ?? active.createdAt) + this.rotationIntervalMs > clock.now()) return undefined;
      return this.rotation(current, false);
    });
    if (kid === undefined) return false;
    log.info('signing key rotated', { kid, alg: this.alg });
    return true;
  }
}

/** The signing keys as the flows see them: the current key and the published set, never a rotation (see ORGS_READS in orgs.ts). */
export const KEYS_READS = ['signingKey', 'verificationKey', 'jwks'] as const satisfies readonly (keyof KeysActor)[];
export type KeysReader = Pick<KeysActor, (typeof KEYS_READS)[number]>;
