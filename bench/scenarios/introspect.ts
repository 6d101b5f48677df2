import { fetchTokens } from '../targets/target.js';
import { cyclingTokenPost, type Scenario } from './scenario.js';

/** Introspection of a pool of pre-issued tokens, by the API app in their audience. */
const POOL = 2000;

export const introspectOpaque: Scenario = {
  name: 'introspect-opaque',
  alg: 'RS256',
  plan: async (target) => {
    if (!target.introspector || !target.ccOpaque || !target.endpoints.introspection) return { skip: 'no introspecting client' };
    const tokens = await fetchTokens(target, target.ccOpaque, POOL);
    return cyclingTokenPost(target.endpoints.introspection, target.introspector, tokens);
  },
};

export const introspectJwt: Scenario = {
  name: 'introspect-jwt',
  alg: 'RS256',
  plan: async (target) => {
    if (!target.introspector || !target.ccJwt || !target.endpoints.introspection) return { skip: 'no introspecting client' };
    if (target.name === 'oidc-provider') return { skip: 'oidc-provider does not introspect JWT access tokens' };
    if (target.name === 'ceiling') return { skip: 'held against the opaque ceiling (one read per introspection, whatever the token)' };
    const tokens = await fetchTokens(target, target.ccJwt, POOL);
    return cyclingTokenPost(target.endpoints.introspection, target.introspector, tokens);
  },
};
