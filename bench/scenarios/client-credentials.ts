import { ALGS, type Alg } from '../args.js';
import { postForm, type Scenario } from './scenario.js';

/** client_credentials with client_secret_basic, returning an opaque token or a JWT. */
export const ccOpaque: Scenario = {
  name: 'cc-opaque',
  alg: 'RS256',
  plan: async (target) => (target.ccOpaque ? postForm(target.endpoints.token, target.ccOpaque.client, target.ccOpaque.body) : { skip: 'no opaque-token client' }),
};

function ccJwt(alg: Alg): Scenario {
  return {
    name: `cc-jwt-${alg}`,
    alg,
    plan: async (target) => (target.ccJwt ? postForm(target.endpoints.token, target.ccJwt.client, target.ccJwt.body) : { skip: 'no JWT client' }),
  };
}

export const ccJwtScenarios: Scenario[] = ALGS.map(ccJwt);
