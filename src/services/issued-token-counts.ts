import { looksLikeJws } from '../protocol/jwt.js';
import type { GrantLabel } from '../observability/labels.js';
import { counting, recordTokenIssued } from '../observability/recorder.js';

/** RFC 8693's identifier of an ID token issued by a token exchange (in the `access_token` member). */
const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';

/**
 * Counts the tokens of a successful answer (`sesame_tokens_issued_total`), from its members as the
 * token endpoint and the implicit flow send them: the access token by its format (a token exchange
 * may issue an ID token in its place), the ID token and the refresh token.
 */
export function countIssuedTokens(grant: GrantLabel, answer: Readonly<Record<string, unknown>>): void {
  // Metrics off: no look at the token (a JWS test of a 1 KB string) on the token path.
  if (!counting()) return;
  const access = answer.access_token;
  if (typeof access === 'string') {
    recordTokenIssued(grant, answer.issued_token_type === ID_TOKEN_TYPE ? 'id_token' : looksLikeJws(access) ? 'jwt_access_token' : 'opaque_access_token');
  }
  if (typeof answer.id_token === 'string') recordTokenIssued(grant, 'id_token');
  if (typeof answer.refresh_token === 'string') recordTokenIssued(grant, 'refresh_token');
}
