import type { ReplayGuardActor } from '../actors/replay-guard.js';
import type { CryptoPool } from '../workers/pool.js';
import { checkDpopClaims, DPOP_ALGS, invalidProof, parseDpopProof, proofReplayHorizon, type DpopProof } from '../protocol/dpop.js';
import { OAuthError } from '../protocol/errors.js';
import { clock } from '../util/clock.js';
import type { DpopNonces } from './dpop-nonces.js';

/** A request's DPoP header and what the proof must match. */
export interface DpopRequest {
  /** The DPoP header's value (the first one, if repeated). */
  proof: string;
  /** The request carried more than one DPoP header. */
  repeated: boolean;
  method: string;
  /** The endpoint's path (its URL is the issuer's plus this). */
  path: string;
  /** At a protected resource: the access token the proof must name (`ath`). */
  accessToken?: string | undefined;
}

/** Headers that let a browser client read the nonce (CORS) along with it. */
const EXPOSE = 'DPoP-Nonce, WWW-Authenticate';

/**
 * Verifies the DPoP proof of a request (RFC 9449 §4.3): its rules (src/protocol/dpop.ts), the
 * server nonce when nonces are required, the signature in the worker pool (inline on an HTTP
 * acceptor thread), and its first use, recorded durably before the caller answers. Replays are
 * refused across threads: every thread's replay guard decides first uses in one LMDB store.
 */
export class DpopProofs {
  /** The algorithms proofs may use (discovery, challenges). */
  readonly algs = DPOP_ALGS;

  constructor(
    private readonly issuer: string,
    /** Where signatures are checked: the worker pool, or the calling thread (an HTTP acceptor's SignatureCheck). */
    private readonly pool: Pick<CryptoPool, 'verifySignature'>,
    private readonly replay: ReplayGuardActor,
    /** Set when proofs must carry a server nonce (SESAME_DPOP_REQUIRE_NONCE). */
    private readonly nonces: DpopNonces | undefined,
  ) {}

  /** The proof's key, once every check passed and its first use is recorded; throws invalid_dpop_proof or use_dpop_nonce. */
  async verify(request: DpopRequest): Promise<DpopProof> {
    if (request.repeated) throw invalidProof('more than one DPoP header');
    const proof = parseDpopProof(request.proof);
    const nowSeconds = clock.seconds();
    checkDpopClaims(proof, { method: request.method, url: this.issuer + request.path, nowSeconds, accessToken: request.accessToken });
    if (this.nonces && (proof.nonce === undefined || !this.nonces.accepts(proof.nonce))) {
      throw new OAuthError('use_dpop_nonce', proof.nonce === undefined ? 'DPoP proof must carry the server nonce' : 'DPoP nonce is not current', {
        headers: this.nonceHeaders()!,
      });
    }
    const valid = await this.pool.verifySignature({ keyId: proof.jkt, jwk: proof.jwk, alg: proof.alg, signingInput: proof.signingInput, signature: proof.signature });
    if (!valid) throw invalidProof('DPoP proof signature invalid');
    // Last: a proof refused for any other reason is not spent.
    if (!(await this.replay.firstUse(`dpop:${proof.jkt}:${proof.jti}`, proofReplayHorizon(proof), nowSeconds))) {
      throw invalidProof('DPoP proof was already used (jti)');
    }
    return proof;
  }

  /** The DPoP-Nonce to send along an answer to a DPoP request, when nonces are required. */
  nonceHeaders(): Record<string, string> | undefined {
    return this.nonces ? { 'DPoP-Nonce': this.nonces.current(), 'Access-Control-Expose-Headers': EXPOSE } : undefined;
  }
}
