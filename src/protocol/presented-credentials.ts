import { OAuthError } from './errors.js';
import type { Form } from './form.js';

/**
 * Extracts how a client presented itself (RFC 6749 §2.3, RFC 7523 §2.2), before any lookup:
 * exactly one mechanism may be used. Verification happens in src/services/client-auth.ts.
 */
const JWT_BEARER_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

export type PresentedClient =
  | { method: 'client_secret_basic'; clientId: string; clientSecret: string }
  | { method: 'client_secret_post'; clientId: string; clientSecret: string }
  | { method: 'private_key_jwt'; clientId: string | undefined; assertion: string }
  | { method: 'none'; clientId: string }
  | { method: 'anonymous' };

function decodeBasicPart(value: string, what: string): string {
  try {
    // RFC 6749 §2.3.1: client_id and client_secret are form-urlencoded before Basic encoding.
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    throw new OAuthError('invalid_request', `malformed ${what} in Authorization header`);
  }
}

export function parseBasicAuthorization(header: string): { clientId: string; clientSecret: string } {
  const match = /^Basic[ ]+([A-Za-z0-9+/=._~-]+)\s*$/i.exec(header);
  if (!match) throw new OAuthError('invalid_request', 'malformed Basic Authorization header');
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) throw new OAuthError('invalid_request', 'malformed Basic Authorization header');
  return {
    clientId: decodeBasicPart(decoded.slice(0, colon), 'client_id'),
    clientSecret: decodeBasicPart(decoded.slice(colon + 1), 'client_secret'),
  };
}

export function presentedClient(authorization: string | undefined, form: Form): PresentedClient {
  const found: PresentedClient[] = [];
  if (authorization !== undefined && /^basic\b/i.test(authorization)) {
    found.push({ method: 'client_secret_basic', ...parseBasicAuthorization(authorization) });
  }
  const clientId = form.get('client_id');
  const secret = form.get('client_secret');
  const assertion = form.get('client_assertion');
  const assertionType = form.get('client_assertion_type');
  if (secret !== undefined) {
    if (clientId === undefined) throw new OAuthError('invalid_request', 'client_secret sent without client_id');
    found.push({ method: 'client_secret_post', clientId, clientSecret: secret });
  }
  if (assertion !== undefined || assertionType !== undefined) {
    if (assertionType !== JWT_BEARER_ASSERTION_TYPE) {
      throw new OAuthError('invalid_request', `client_assertion_type must be ${JWT_BEARER_ASSERTION_TYPE}`);
    }
    if (assertion === undefined) throw new OAuthError('invalid_request', 'client_assertion missing');
    found.push({ method: 'private_key_jwt', clientId, assertion });
  }
  if (found.length > 1) throw new OAuthError('invalid_request', 'more than one client authentication method used');
  const only = found[0];
  if (only) {
    if (only.method === 'client_secret_basic' && clientId !== undefined && clientId !== only.clientId) {
      throw new OAuthError('invalid_request', 'client_id in the body differs from the Authorization header');
    }
    return only;
  }
  return clientId !== undefined ? { method: 'none', clientId } : { method: 'anonymous' };
}
