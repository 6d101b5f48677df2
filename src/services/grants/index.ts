import { authorizationCodeGrant } from './authorization-code.js';
import { clientCredentialsGrant } from './client-credentials.js';
import { deviceCodeGrant, type DeviceCodePorts } from './device-code.js';
import { jwtBearerGrant } from './jwt-bearer.js';
import type { Grant } from './grant.js';
import type { AuthorizationCodePorts } from './authorization-code.js';
import type { ClientCredentialsPorts } from './client-credentials.js';
import type { JwtBearerPorts } from './jwt-bearer.js';
import type { RefreshTokenPorts } from './refresh-token.js';
import type { TokenExchangePorts } from './token-exchange.js';
import { refreshTokenGrant } from './refresh-token.js';
import { tokenExchangeGrant } from './token-exchange.js';

/** What the grants use together: the token route hands this to whichever grant it dispatches to. */
export type GrantsPorts = ClientCredentialsPorts & JwtBearerPorts & AuthorizationCodePorts & RefreshTokenPorts & TokenExchangePorts & DeviceCodePorts;

/** Every grant type the token endpoint serves; a new grant is one module added here. */
export const GRANTS: ReadonlyMap<string, Grant<GrantsPorts>> = new Map(
  [clientCredentialsGrant, jwtBearerGrant, authorizationCodeGrant, refreshTokenGrant, tokenExchangeGrant, deviceCodeGrant].map((g) => [g.type, g]),
);
