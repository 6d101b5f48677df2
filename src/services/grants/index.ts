import { authorizationCodeGrant } from './authorization-code.js';
import { clientCredentialsGrant } from './client-credentials.js';
import { jwtBearerGrant } from './jwt-bearer.js';
import type { Grant } from './grant.js';
import { refreshTokenGrant } from './refresh-token.js';
import { tokenExchangeGrant } from './token-exchange.js';

/** Every grant type the token endpoint serves; a new grant is one module added here. */
export const GRANTS: ReadonlyMap<string, Grant> = new Map(
  [clientCredentialsGrant, jwtBearerGrant, authorizationCodeGrant, refreshTokenGrant, tokenExchangeGrant].map((g) => [g.type, g]),
);
