import { randomUUID, sign } from 'node:crypto';
import { FORM, pathOf, type Scenario } from './scenario.js';

/**
 * The JWT profile grant: each request carries a fresh assertion (own jti, so the replay guard
 * accepts it), signed ES256 by the bench with the machine key it registered.
 */
const b64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

export const jwtBearer: Scenario = {
  name: 'jwt-bearer',
  alg: 'RS256',
  plan: async (target) => {
    const profile = target.jwtProfile;
    if (!profile) return { skip: 'no machine key for the JWT profile grant' };
    const header = b64url({ alg: 'ES256', kid: profile.keyId });
    const scope = encodeURIComponent(profile.scope);
    return {
      requests: [
        {
          method: 'POST',
          path: pathOf(target.endpoints.token),
          headers: { 'content-type': FORM },
          setupRequest: (request) => {
            const now = Math.floor(Date.now() / 1000);
            const input = `${header}.${b64url({ iss: profile.userId, sub: profile.userId, aud: target.issuer, iat: now, exp: now + 300, jti: randomUUID() })}`;
            const signature = sign('sha256', Buffer.from(input), { key: profile.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url');
            request.body = `grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&scope=${scope}&assertion=${input}.${signature}`;
            return request;
          },
        },
      ],
    };
  },
};
