import { createHmac } from 'node:crypto';
import { clock } from '../util/clock.js';

/**
 * Server-provided DPoP nonces (RFC 9449 §8): one nonce per period of the clock, the HMAC of the
 * period's number under a key derived from the master key, so every HTTP thread (and a restarted
 * server) computes the same nonce without sharing state. The nonce of the period before is still
 * accepted, so a client that fetched one just before a rotation is not refused at once: a nonce
 * lives between one and two periods.
 */
export const DPOP_NONCE_PERIOD_MS = 5 * 60_000;

/** The master key's derived key for nonces (every thread derives the same one). */
export const DPOP_NONCE_PURPOSE = 'dpop-nonce';

export class DpopNonces {
  private period = -1;
  private currentNonce = '';
  private previousNonce = '';

  constructor(private readonly key: Buffer) {}

  /** The nonce a client should use now (sent as DPoP-Nonce). */
  current(): string {
    this.rotate();
    return this.currentNonce;
  }

  /** True for the current nonce and the one before it. */
  accepts(nonce: string): boolean {
    this.rotate();
    return nonce === this.currentNonce || nonce === this.previousNonce;
  }

  private rotate(): void {
    const period = Math.floor(clock.now() / DPOP_NONCE_PERIOD_MS);
    if (period === this.period) return;
    this.period = period;
    this.currentNonce = this.nonceOf(period);
    this.previousNonce = this.nonceOf(period - 1);
  }

  private nonceOf(period: number): string {
    return createHmac('sha256', this.key).update(`dpop-nonce:${period}`).digest('base64url').slice(0, 32);
  }
}
