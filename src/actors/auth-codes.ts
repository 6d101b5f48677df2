import { mustWin } from '../storage/decisions.js';
import { recordKind, type StorePort } from '../storage/store-port.js';
import { sha256Base64url } from '../util/hash.js';
import { newOpaqueToken } from '../util/ids.js';
import { clock } from '../util/clock.js';
import type { View } from '../util/readonly.js';

/**
 * Owns authorization codes: 256 random bits, stored under their SHA-256, single use, 60 seconds.
 * A redeemed code stays on record until it expires so a second use is recognized as a replay
 * (RFC 6749 §4.1.2: the tokens issued from the first use are then revoked).
 */
const CODE_LIFETIME_MS = 60_000;

export interface CodeGrant {
  /** The grant the code's tokens belong to (revoked together on replay). */
  grantId: string;
  clientId: string;
  redirectUri: string;
  codeChallenge?: string;
  /** RFC 9449 §10: the exchange needs a DPoP proof of this key (thumbprint). */
  dpopJkt?: string;
  nonce?: string;
  scopes: string[];
  audience: string[];
  userId: string;
  sid: string;
  authTime: number;
  amr: readonly string[];
  /** Resource indicators (RFC 8707) the authorization named: what its tokens may be for. */
  resources?: readonly string[];
}

interface CodeRecord extends CodeGrant {
  id: string;
  exp: number;
  usedAt?: number;
}

export interface FoundCode {
  grant: View<CodeGrant>;
  used: boolean;
  /**
   * Marks the code used; call it in the same tick as the checks (no await between), then await the
   * promise: it rejects with DecidedElsewhere when the store says another redemption claimed it first.
   */
  consume(): Promise<unknown>;
}

/** Reads and decides in the store: a code issued on any HTTP thread is redeemed on any other. */
const CODES = recordKind<CodeRecord>('authCodes');

export class AuthCodesActor {
  constructor(private readonly store: StorePort) {}

  /** Stores a code; resolves with it once the record is durable (committed before the redirect). */
  async issue(grant: CodeGrant): Promise<string> {
    const code = newOpaqueToken();
    const record: CodeRecord = { ...grant, id: sha256Base64url(code), exp: clock.now() + CODE_LIFETIME_MS };
    await this.store.durable(this.store.put(CODES, record.id, record));
    return code;
  }

  /**
   * Finds an unexpired code. The caller checks client, redirect_uri and PKCE first (a failed check
   * must not burn the legitimate client's code), then consumes it: the store claims it once, so of
   * concurrent redemptions (on any threads) one succeeds.
   */
  async find(code: string, now = clock.now()): Promise<FoundCode | undefined> {
    const record = await this.store.get(CODES, sha256Base64url(code));
    if (!record || record.exp <= now) return undefined;
    return {
      grant: record,
      used: record.usedAt !== undefined,
      consume: () => {
        const usedAt = clock.now();
        const claim = this.store.claimOnce(CODES, record.id, (stored) => (stored.usedAt === undefined ? { ...stored, usedAt } : undefined));
        return this.store.durable(
          mustWin(
            claim.then((c) => c.claimed),
            'code',
          ),
        );
      },
    };
  }

  sweep(now = clock.now()): Promise<number> {
    return this.store.sweep(CODES, (record) => record.exp <= now);
  }
}
