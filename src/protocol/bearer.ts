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
