import { get, type Scenario } from './scenario.js';

/** GET the discovery document. */
export const discovery: Scenario = {
  name: 'discovery',
  alg: 'RS256',
  plan: async (target) => get(target.endpoints.discovery),
};
