import { OAuthError } from './errors.js';

/**
 * Strict `application/x-www-form-urlencoded` parsing for the OAuth endpoints (RFC 6749 §3.2):
 * the content type must be right, every byte sequence must be valid UTF-8 after percent-decoding,
 * and a parameter may appear at most once.
 */
export interface Form extends ReadonlyMap<string, string> {
  /** Every value of a parameter that may repeat (`resource`, RFC 8707 §2); `get` has the first. */
  all(name: string): readonly string[];
}

/** Parameters a request may send more than once; any other repeated parameter is an error. */
export const REPEATABLE_PARAMS: ReadonlySet<string> = new Set(['resource']);
const NONE: readonly string[] = Object.freeze([]);

class FormMap extends Map<string, string> implements Form {
  private repeats: Map<string, string[]> | undefined;

  add(name: string, value: string): void {
    if (!this.has(name)) {
      this.set(name, value);
      return;
    }
    if (!REPEATABLE_PARAMS.has(name)) throw new OAuthError('invalid_request', `parameter ${name} is repeated`);
    this.repeats ??= new Map();
    const more = this.repeats.get(name);
    if (more) more.push(value);
    else this.repeats.set(name, [value]);
  }

  all(name: string): readonly string[] {
    const first = this.get(name);
    if (first === undefined) return NONE;
    const more = this.repeats?.get(name);
    return more ? [first, ...more] : [first];
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const MAX_PARAMS = 64;

export function isFormContentType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const semi = contentType.indexOf(';');
  const mime = (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  if (mime !== 'application/x-www-form-urlencoded') return false;
  if (semi === -1) return true;
  const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType.slice(semi));
  return !charset || charset[1]!.toLowerCase() === 'utf-8';
}

function decodeComponent(raw: string, name: string): string {
  const plus = raw.includes('+') ? raw.replace(/\+/g, ' ') : raw;
  if (!plus.includes('%')) return plus;
  const bytes: number[] = [];
  for (let i = 0; i < plus.length; i++) {
    const c = plus.charCodeAt(i);
    if (c === 0x25) {
      const hex = plus.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) throw new OAuthError('invalid_request', `malformed percent-encoding in ${name}`);
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (c < 0x80) {
      bytes.push(c);
    } else {
      for (const b of Buffer.from(plus[i]!, 'utf8')) bytes.push(b);
    }
  }
  try {
    return utf8.decode(Uint8Array.from(bytes));
  } catch {
    throw new OAuthError('invalid_request', `${name} is not valid UTF-8`);
  }
}

/** The decoded name/value pairs of a urlencoded string; empty values count as omitted (RFC 6749 §3.1). */
function* decodedPairs(text: string): Generator<[string, string]> {
  if (text.length === 0) return;
  const pairs = text.split('&');
  if (pairs.length > MAX_PARAMS) throw new OAuthError('invalid_request', 'too many parameters');
  for (const pair of pairs) {
    if (pair.length === 0) continue;
    const eq = pair.indexOf('=');
    const name = decodeComponent(eq === -1 ? pair : pair.slice(0, eq), 'parameter name');
    const value = eq === -1 ? '' : decodeComponent(pair.slice(eq + 1), name);
    if (value !== '') yield [name, value];
  }
}

/** Parses a urlencoded string (request body or query string); a repeated parameter is an error, but for `resource`. */
export function parseUrlEncoded(text: string): Form {
  const form = new FormMap();
  for (const [name, value] of decodedPairs(text)) form.add(name, value);
  return form;
}

/** The text of a POSTed form: the content type must say so and the bytes must be UTF-8. */
export function formBodyText(contentType: string | undefined, body: Buffer): string {
  if (!isFormContentType(contentType)) {
    throw new OAuthError('invalid_request', 'Content-Type must be application/x-www-form-urlencoded');
  }
  try {
    return utf8.decode(body);
  } catch {
    throw new OAuthError('invalid_request', 'request body is not valid UTF-8');
  }
}

/** Reads the form body of a POST to an OAuth endpoint. */
export function parseFormBody(contentType: string | undefined, body: Buffer): Form {
  return parseUrlEncoded(formBodyText(contentType, body));
}

/**
 * Like parseUrlEncoded, but keeps repeated parameters (the authorization endpoint must still find
 * client_id and redirect_uri to decide where the "repeated parameter" error goes).
 */
export function parseUrlEncodedMulti(text: string): Map<string, string[]> {
  const params = new Map<string, string[]>();
  for (const [name, value] of decodedPairs(text)) {
    const values = params.get(name);
    if (values) values.push(value);
    else params.set(name, [value]);
  }
  return params;
}
