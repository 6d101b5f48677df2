import { get, type Scenario } from './scenario.js';

/** GET the key set. */
export const jwks: Scenario = {
  name: 'jwks',
  alg: 'RS256',
  plan: async (target) => get(target.endpoints.jwks),
};
