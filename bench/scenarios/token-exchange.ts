import { basicAuth, fetchTokens } from '../targets/target.js';
import { FORM, pathOf, type Scenario } from './scenario.js';

/**
 * RFC 8693 delegation: an app exchanges access tokens of its audience (a pool of pre-issued opaque
 * client_credentials tokens, cycled) for new opaque access tokens.
 */
const POOL = 2000;

export const tokenExchange: Scenario = {
  name: 'token-exchange',
  alg: 'RS256',
  plan: async (target) => {
    const exchange = target.exchange;
    if (!exchange) return { skip: 'no app allowed to exchange tokens' };
    const subjects = await fetchTokens(target, exchange.subject, POOL);
    const bodies = subjects.map(
      (token) =>
        `grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token&subject_token=${encodeURIComponent(token)}`,
    );
    let next = 0;
    return {
      requests: [
        {
          method: 'POST',
          path: pathOf(target.endpoints.token),
          headers: { 'content-type': FORM, authorization: basicAuth(exchange.client) },
          setupRequest: (request) => {
            request.body = bodies[next++ % bodies.length];
            return request;
          },
        },
      ],
    };
  },
};
