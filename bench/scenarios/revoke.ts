import { fetchTokens } from '../targets/target.js';
import { cyclingTokenPost, type Scenario } from './scenario.js';

/**
 * Revocation of live opaque tokens by their own client: as many tokens are issued beforehand as the
 * run revokes, and the run ends when each has been revoked once (its time is the time to revoke
 * them all). Revoking a token already revoked is cheaper, so a pool that wraps would overstate it.
 * The pool is sized to the run: about what Sesame revokes in --duration seconds on 2 cores.
 */
const PER_SECOND = 5_000;

export const revoke: Scenario = {
  name: 'revoke',
  alg: 'RS256',
  plan: async (target, options) => {
    if (!target.ccOpaque || !target.endpoints.revocation) return { skip: 'no revocation endpoint' };
    const tokens = await fetchTokens(target, target.ccOpaque, PER_SECOND * options.duration);
    return { ...cyclingTokenPost(target.endpoints.revocation, target.ccOpaque.client, tokens), amount: tokens.length };
  },
};
