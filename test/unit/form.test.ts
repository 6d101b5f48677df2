import { describe, expect, it } from 'vitest';
import { OAuthError } from '../../src/protocol/errors.js';
import { isFormContentType, parseFormBody, parseUrlEncoded } from '../../src/protocol/form.js';
import { parseBasicAuthorization, presentedClient } from '../../src/protocol/presented-credentials.js';

const form = (s: string) => parseUrlEncoded(s);
const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return e instanceof OAuthError ? `${e.error}` : 'other';
  }
  return 'none';
};

describe('form parsing', () => {
  it('decodes +, percent escapes and UTF-8', () => {
    const f = form('a=b+c&d=%C3%A9t%C3%A9&e=x%2By');
    expect(f.get('a')).toBe('b c');
    expect(f.get('d')).toBe('été');
    expect(f.get('e')).toBe('x+y');
  });
  it('treats empty values as omitted', () => {
    expect(form('scope=&grant_type=x').has('scope')).toBe(false);
  });
  it('rejects repeated parameters, bad escapes and invalid UTF-8', () => {
    expect(code(() => form('a=1&a=2'))).toBe('invalid_request');
    expect(code(() => form('a=%zz'))).toBe('invalid_request');
    expect(code(() => form('a=%C3%28'))).toBe('invalid_request');
    expect(code(() => parseFormBody('application/x-www-form-urlencoded', Buffer.from([0x61, 0x3d, 0xff])))).toBe('invalid_request');
  });
  it('checks the content type', () => {
    expect(isFormContentType('application/x-www-form-urlencoded; charset=UTF-8')).toBe(true);
    expect(isFormContentType('application/x-www-form-urlencoded;charset=latin1')).toBe(false);
    expect(isFormContentType('application/json')).toBe(false);
    expect(code(() => parseFormBody(undefined, Buffer.from('a=b')))).toBe('invalid_request');
  });
});

describe('client credential presentation', () => {
  const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

  it('decodes Basic credentials form-encoded per RFC 6749 §2.3.1', () => {
    expect(parseBasicAuthorization(basic('svc@org.example', 'a:b%c'))).toEqual({ clientId: 'svc@org.example', clientSecret: 'a:b%c' });
  });
  it('rejects malformed Basic headers', () => {
    expect(code(() => parseBasicAuthorization('Basic !!!'))).toBe('invalid_request');
    expect(code(() => parseBasicAuthorization(`Basic ${Buffer.from('nocolon').toString('base64')}`))).toBe('invalid_request');
  });
  it('rejects two authentication methods at once', () => {
    expect(code(() => presentedClient(basic('a', 'b'), form('client_id=a&client_secret=b')))).toBe('invalid_request');
  });
  it('classifies each method', () => {
    expect(presentedClient(basic('a', 'b'), form('')).method).toBe('client_secret_basic');
    expect(presentedClient(undefined, form('client_id=a&client_secret=b')).method).toBe('client_secret_post');
    expect(presentedClient(undefined, form('client_id=a')).method).toBe('none');
    expect(presentedClient(undefined, form('')).method).toBe('anonymous');
    expect(presentedClient(undefined, form('client_assertion=x&client_assertion_type=urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-bearer')).method).toBe('private_key_jwt');
    expect(code(() => presentedClient(undefined, form('client_assertion=x&client_assertion_type=bad')))).toBe('invalid_request');
  });
});
