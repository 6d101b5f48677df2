import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { basicAuth } from '../targets/target.js';
import { FORM, pathOf, type Scenario } from './scenario.js';

/**
 * cc-jwt with DPoP (RFC 9449): the same client_credentials request for a JWT, each with a fresh
 * proof (own jti, so the replay guard takes it) signed ES256 by the bench with one key for the
 * run, as a client keeps its key. What it costs beyond cc-jwt-RS256 is the proof: its parsing,
 * signature check (the worker pool), the jti's durable record and the `cnf` claim. Signing a proof
 * costs the load generator ~30 µs, as jwt-bearer's assertions do.
 */
const b64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

export const ccDpop: Scenario = {
  name: 'cc-dpop',
  alg: 'RS256',
  plan: async (target) => {
    const cc = target.ccJwt;
    if (!cc) return { skip: 'no JWT client' };
    const doc = (await (await fetch(target.endpoints.discovery)).json()) as { dpop_signing_alg_values_supported?: string[] };
    if (!doc.dpop_signing_alg_values_supported?.includes('ES256')) return { skip: 'the target does not advertise DPoP with ES256' };
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
    const header = b64url({ alg: 'ES256', typ: 'dpop+jwt', jwk: { kty, crv, x, y } });
    const htu = target.endpoints.token;
    const headers = { 'content-type': FORM, authorization: basicAuth(cc.client) };
    return {
      requests: [
        {
          method: 'POST',
          path: pathOf(htu),
          headers,
          body: cc.body,
          setupRequest: (request) => {
            const input = `${header}.${b64url({ jti: randomUUID(), htm: 'POST', htu, iat: Math.floor(Date.now() / 1000) })}`;
            const proof = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url');
            request.headers = { ...headers, dpop: `${input}.${proof}` };
            return request;
          },
        },
      ],
    };
  },
};
