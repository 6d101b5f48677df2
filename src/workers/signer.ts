import { availableParallelism } from 'node:os';
import type { KeyObject } from 'node:crypto';
import type { SigningAlg } from '../config.js';
import type { CryptoPool } from './pool.js';
import { signJwsInput } from './sign.js';

/** The key a JWS is signed with, as the keys actor hands it out. */
export interface ActiveSigningKey {
  kid: string;
  alg: SigningAlg;
  privateKey: KeyObject;
  privateKeyDer: Uint8Array;
}

/** Produces the base64url signature of a JWS signing input. */
export interface Signer {
  readonly mode: 'inline' | 'pool';
  sign(key: ActiveSigningKey, signingInput: string): Promise<string>;
}

export class InlineSigner implements Signer {
  readonly mode = 'inline' as const;
  sign(key: ActiveSigningKey, signingInput: string): Promise<string> {
    return Promise.resolve(signJwsInput(key.alg, key.privateKey, signingInput));
  }
}

interface Pending {
  input: string;
  resolve: (signature: string) => void;
  reject: (error: unknown) => void;
}

/**
 * Batches every signature requested while the pool is busy (or within one event-loop turn) into
 * one worker task per key, so a pool round trip is paid per batch rather than per token.
 */
export class PoolSigner implements Signer {
  readonly mode = 'pool' as const;
  private readonly queues = new Map<string, { key: ActiveSigningKey; items: Pending[] }>();
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly pool: CryptoPool,
    private readonly maxBatch = 256,
  ) {}

  sign(key: ActiveSigningKey, signingInput: string): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      let queue = this.queues.get(key.kid);
      if (!queue) {
        queue = { key, items: [] };
        this.queues.set(key.kid, queue);
      }
      queue.items.push({ input: signingInput, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.dispatch();
    });
  }

  private dispatch(): void {
    for (const [kid, queue] of this.queues) {
      while (queue.items.length > 0 && this.inFlight < this.pool.threads) {
        const batch = queue.items.splice(0, this.maxBatch);
        this.inFlight++;
        this.pool
          .run<string[]>({
            op: 'signBatch',
            kid,
            alg: queue.key.alg,
            keyDer: queue.key.privateKeyDer,
            inputs: batch.map((p) => p.input),
          })
          .then(
            (signatures) => batch.forEach((p, i) => p.resolve(signatures[i]!)),
            (error: unknown) => batch.forEach((p) => p.reject(error)),
          )
          .finally(() => {
            this.inFlight--;
            if (this.hasWork()) this.dispatch();
          });
      }
      if (queue.items.length === 0) this.queues.delete(kid);
    }
  }

  private hasWork(): boolean {
    for (const queue of this.queues.values()) if (queue.items.length > 0) return true;
    return false;
  }
}

/**
 * `auto` rule: RSA signatures cost ~1 ms each, so they go to the pool whenever there is a core to
 * spare; ES256/EdDSA signatures cost ~30-60 µs, less than a pool round trip, so they stay inline.
 */
export function chooseSignerMode(
  requested: 'auto' | 'pool' | 'inline',
  alg: SigningAlg,
  cores = availableParallelism(),
): 'pool' | 'inline' {
  if (requested !== 'auto') return requested;
  return alg === 'RS256' && cores >= 2 ? 'pool' : 'inline';
}
