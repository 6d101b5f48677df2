import { createPublicKey, generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import type { Database } from 'lmdb';
import type { SigningAlg } from '../config.js';
import type { MasterKey } from '../crypto/master-key.js';
import { newId } from '../util/ids.js';
import { log } from '../util/log.js';
import { importPkcs8 } from '../crypto/jws-signature.js';
import type { ActiveSigningKey } from '../workers/signer.js';
import { clock } from '../util/clock.js';

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

/** Off the event loop (libuv's thread pool): an RSA key takes tens to hundreds of milliseconds. */
async function generate(alg: SigningAlg): Promise<{ privateDer: Buffer; publicKey: KeyObject }> {
  const pair =
    alg === 'RS256'
      ? await generateKeyPairAsync('rsa', { modulusLength: 2048 })
      : alg === 'ES256'
        ? await generateKeyPairAsync('ec', { namedCurve: 'P-256' })
        : await generateKeyPairAsync('ed25519');
  return { privateDer: pair.privateKey.export({ format: 'der', type: 'pkcs8' }), publicKey: pair.publicKey };
}

export class KeysActor {
  /** The algorithm of the key a signing-key store signs with now, if any (read before an actor exists). */
  static activeAlg(store: Database<StoredKey, string>): SigningAlg | undefined {
    for (const { value } of store.getRange()) if (value.status === 'active') return value.alg;
    return undefined;
  }

  private keys = new Map<string, StoredKey>();
  private active!: ActiveSigningKey;
  private verification = new Map<string, VerificationKey>();
  private jwksBody = '{"keys":[]}';
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Database<StoredKey, string>,
    private readonly masterKey: MasterKey,
    private readonly alg: SigningAlg,
    private readonly rotationIntervalMs: number,
    /** Longest lifetime of anything a key signs: how long a retired key must stay published. */
    private readonly maxTokenLifetimeMs: number,
    /** Waits until a write is synced: a key must be on disk before anything it signs leaves. */
    private readonly durable: <R>(write: Promise<R>) => Promise<R> = (write) => write,
  ) {}

  async start(): Promise<void> {
    for (const { value } of this.db.getRange()) this.keys.set(value.kid, value);
    const active = this.byStatus('active')[0];
    const next = this.byStatus('next')[0];
    if (!active || active.alg !== this.alg) {
      // First start, or the operator changed the algorithm: a key of the configured algorithm
      // must sign from now on.
      await this.rotate(true);
    } else if (!next || next.alg !== this.alg) {
      if (next) this.keys.delete(next.kid);
      const fresh = this.adopt(await this.newKey('next'));
      await this.persist([fresh], next ? [next.kid] : []);
    }
    this.rebuild();
    this.scheduleRotation();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
  }

  /** The key new tokens are signed with. */
  signingKey(): ActiveSigningKey {
    return this.active;
  }

  verificationKey(kid: string): VerificationKey | undefined {
    return this.verification.get(kid);
  }

  /** The precomputed JWKS document. */
  jwks(): string {
    return this.jwksBody;
  }

  /**
   * Promotes the next key to active, retires the active one and publishes a new next key.
   * `immediate` also replaces the next key (used when the configured algorithm changed).
   */
  async rotate(immediate = false): Promise<{ kid: string }> {
    const upcoming = () => this.byStatus('next')[0];
    const needsReplacement = () => immediate || upcoming()?.alg !== this.alg;
    // Generate first (off the event loop), then change the key set in one synchronous step.
    const next = await this.newKey('next');
    const replacement = needsReplacement() ? await this.newKey('active') : undefined;
    // Another rotation may have used the next key meanwhile: start over rather than sign with nothing.
    if (needsReplacement() && !replacement) return this.rotate(immediate);
    const now = clock.now();
    const changed: StoredKey[] = [];
    const removed: string[] = [];
    for (const key of this.byStatus('active')) {
      key.status = 'retired';
      key.publishUntil = now + this.maxTokenLifetimeMs + 60_000;
      changed.push(key);
    }
    let promoted = upcoming();
    if (replacement) {
      if (promoted) {
        this.keys.delete(promoted.kid);
        removed.push(promoted.kid);
      }
      promoted = this.adopt(replacement);
    }
    promoted = promoted!;
    promoted.status = 'active';
    promoted.activatedAt = now;
    changed.push(promoted, this.adopt(next));
    for (const key of this.byStatus('retired')) {
      if ((key.publishUntil ?? 0) <= now) {
        this.keys.delete(key.kid);
        removed.push(key.kid);
      }
    }
    await this.persist(changed, removed);
    this.rebuild();
    log.info('signing key rotated', { kid: promoted.kid, alg: promoted.alg });
    return { kid: promoted.kid };
  }

  private adopt(key: StoredKey): StoredKey {
    this.keys.set(key.kid, key);
    return key;
  }

  private async newKey(status: KeyStatus): Promise<StoredKey> {
    const { privateDer, publicKey } = await generate(this.alg);
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

  private byStatus(status: KeyStatus): StoredKey[] {
    return [...this.keys.values()].filter((k) => k.status === status);
  }

  private async persist(changed: StoredKey[], removed: string[]): Promise<void> {
    await this.durable(
      this.db.transaction(() => {
        for (const key of changed) this.db.put(key.kid, key);
        for (const kid of removed) this.db.remove(kid);
      }),
    );
  }

  private rebuild(): void {
    const active = this.byStatus('active')[0]!;
    const der = this.masterKey.decrypt(active.sealedPrivateKey);
    this.active = { kid: active.kid, alg: active.alg, privateKey: importPkcs8(der), privateKeyDer: der };
    this.verification = new Map(
      [...this.keys.values()].map((k) => [
        k.kid,
        { kid: k.kid, alg: k.alg, publicKey: createPublicKey({ key: k.publicJwk as any, format: 'jwk' }) },
      ]),
    );
    // Active first, then next, then retired: clients that take the first key get the right one.
    const order: Record<KeyStatus, number> = { active: 0, next: 1, retired: 2 };
    const published = [...this.keys.values()].sort((a, b) => order[a.status] - order[b.status]);
    this.jwksBody = JSON.stringify({ keys: published.map((k) => k.publicJwk) });
  }

  private scheduleRotation(): void {
    const active = this.byStatus('active')[0]!;
    const due = (active.activatedAt ?? active.createdAt) + this.rotationIntervalMs;
    // Timers cap at ~24.8 days; check at least hourly so long intervals still fire.
    const delay = Math.min(Math.max(due - clock.now(), 0), 3_600_000);
    this.timer = setTimeout(() => {
      this.rotateIfDue()
        .catch((error: unknown) => log.error('key rotation failed', { error: String(error) }))
        .finally(() => this.scheduleRotation());
    }, delay);
    this.timer.unref();
  }

  /** Rotates when the active key has signed for a whole interval (the timer's check; tests call it after moving the clock). */
  async rotateIfDue(): Promise<boolean> {
    const current = this.byStatus('active')[0]!;
    if ((current.activatedAt ?? current.createdAt) + this.rotationIntervalMs > clock.now()) return false;
    await this.rotate();
    return true;
  }
}
