import { availableParallelism } from 'node:os';
import type { KeyObject } from 'node:crypto';
import type { SigningAlg } from '../config.js';
import type { CryptoPool } from './pool.js';
import { Batcher } from './batcher.js';
import { signJwsInput } from '../crypto/jws-signature.js';

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

/**
 * Most signatures per pool task: about 2-3 ms of work, so a request never waits behind a long batch
 * (measured for RS256 at 50 connections: batches of 8 instead of 256 cut the latency spread by
 * half at the same throughput).
 */
const BATCH_SIZE: Record<SigningAlg, number> = { RS256: 8, ES256: 64, EdDSA: 64 };

/**
 * Signs in the worker pool, batching every signature queued while the pool is busy (one batch per
 * key), so a pool round trip is paid per batch rather than per token.
 */
export class PoolSigner implements Signer {
  readonly mode = 'pool' as const;
  private readonly batchers = new Map<string, Batcher<string, string>>();

  constructor(private readonly pool: CryptoPool) {}

  sign(key: ActiveSigningKey, signingInput: string): Promise<string> {
    let batcher = this.batchers.get(key.kid);
    if (!batcher) {
      batcher = new Batcher<string, string>(
        (inputs) => this.pool.run<string[]>({ op: 'signBatch', kid: key.kid, alg: key.alg, keyDer: key.privateKeyDer, inputs }),
        this.pool.slots,
        BATCH_SIZE[key.alg],
        'sign',
      );
      this.batchers.set(key.kid, batcher);
    }
    return batcher.submit(signingInput);
  }
}

/**
 * `auto` rule, from `npm run bench -- --signer both` on 2 cores: with one HTTP thread and batching,
 * the pool beats inline signing for every algorithm (RS256 by far; ES256 12.5k vs 9.6k req/s,
 * EdDSA 12.1k vs 8.6k), because it frees the event loop. On a single core there is nothing to
 * offload to. With several HTTP threads every thread signs (and checks signatures) itself: the
 * threads are already the cores' work, and a pool only the main thread could use made that thread
 * the busiest one (refresh on 2 threads, 2 cores: 72% of the HTTP threads' CPU on one thread).
 */
export function chooseSignerMode(requested: 'auto' | 'pool' | 'inline', cores = availableParallelism(), httpThreads = 1): 'pool' | 'inline' {
  if (requested !== 'auto') return requested;
  return cores >= 2 && httpThreads === 1 ? 'pool' : 'inline';
}
