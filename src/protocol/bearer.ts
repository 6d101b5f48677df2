/** RFC 6750 §2.1: `Bearer <b64token>`; the token, or undefined when the header is not of that form. */
const BEARER = /^Bearer[ ]+([A-Za-z0-9._~+/-]+=*)\s*$/i;

export function bearerToken(authorization: string): string | undefined {
  return BEARER.exec(authorization)?.[1];
}

/** RFC 9449 §7.1: `DPoP <token68>`; the token, or undefined when the header is not of that form. */
const DPOP = /^DPoP[ ]+([A-Za-z0-9._~+/-]+=*)\s*$/i;

export function dpopToken(authorization: string): string | undefined {
  return DPOP.exec(authorization)?.[1];
}

/**
 * An `error_description` as a challenge parameter (RFC 6750 §3): only %x20-21 / %x23-5B / %x5D-7E,
 * so a description that quotes request input (a proof's `alg`) can neither end the quoted string
 * nor break the header line (CR/LF would split the response).
 */
export function challengeDescription(description: string): string {
  return description.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '?').slice(0, 300);
}

/**
 * A `WWW-Authenticate` challenge (RFC 6750 §3, RFC 9449 §7.1): the scheme and its parameters,
 * quoted; `error_description` kept to its characters (it may quote request input).
 */
export function challenge(scheme: 'Bearer' | 'DPoP', params: Readonly<Record<string, string | undefined>>): string {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) parts.push(`${name}="${name === 'error_description' ? challengeDescription(value) : value}"`);
  }
  return parts.length > 0 ? `${scheme} ${parts.join(', ')}` : scheme;
}
