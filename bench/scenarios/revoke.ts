import { fetchTokens } from '../targets/target.js';
import { cyclingTokenPost, type Scenario } from './scenario.js';

/**
 * Revocation of pre-issued opaque tokens by their own client. The pool is large so most requests
 * revoke a live token; once it wraps, revoking an already revoked token is still a 200.
 */
const POOL = 20_000;

export const revoke: Scenario = {
  name: 'revoke',
  alg: 'RS256',
  plan: async (target) => {
    if (!target.ccOpaque || !target.endpoints.revocation) return { skip: 'no revocation endpoint' };
    const tokens = await fetchTokens(target, target.ccOpaque, POOL);
    return cyclingTokenPost(target.endpoints.revocation, target.ccOpaque.client, tokens);
  },
};
