import { createHash } from 'node:crypto';
import { parseResources } from '../../src/protocol/resource-indicators.js';
import { describe, expect, it } from 'vitest';
import { base32Decode, base32Encode, hotp, totpAt, verifyTotp } from '../../src/crypto/totp.js';
import { atHash } from '../../src/protocol/at-hash.js';
import { matchesRegistered } from '../../src/protocol/authorize/redirect-uri.js';
import { validateAuthorizeRequest, type AuthorizeDirectory } from '../../src/protocol/authorize/validate.js';
import { isPkceValue, s256Challenge, verifierMatches } from '../../src/protocol/pkce.js';
import { parseMaxAge, parsePrompt } from '../../src/protocol/prompt.js';
import { chooseResponseMode, deliver } from '../../src/protocol/response-mode.js';
import { chooseLocale } from '../../src/ui/i18n.js';
import { html } from '../../src/util/html.js';
import type { AppRecord } from '../../src/model/records.js';

describe('TOTP (RFC 6238 / RFC 4226)', () => {
  const secret = base32Encode(Buffer.from('12345678901234567890'));
  it('matches the RFC 4226 HOTP and RFC 6238 SHA-1 test vectors', () => {
    expect(['755224', '287082', '359152', '969429'].map((_, i) => hotp(Buffer.from('12345678901234567890'), i))).toEqual(['755224', '287082', '359152', '969429']);
    // RFC 6238 Appendix B (SHA-1), last six digits of the 8-digit values.
    expect(totpAt(secret, 59)).toBe('287082');
    expect(totpAt(secret, 1111111109)).toBe('081804');
    expect(totpAt(secret, 1234567890)).toBe('005924');
    expect(totpAt(secret, 2000000000)).toBe('279037');
  });
  it('accepts one step of drift either side and nothing further', () => {
    const t = 1_700_000_000;
    expect(verifyTotp(secret, totpAt(secret, t), t)).toBe(Math.floor(t / 30));
    expect(verifyTotp(secret, totpAt(secret, t - 30), t)).toBe(Math.floor(t / 30) - 1);
    expect(verifyTotp(secret, totpAt(secret, t + 30), t)).toBe(Math.floor(t / 30) + 1);
    expect(verifyTotp(secret, totpAt(secret, t - 90), t)).toBeUndefined();
    expect(verifyTotp(secret, 'abcdef', t)).toBeUndefined();
  });
  it('round-trips base32 and refuses other alphabets', () => {
    expect(base32Decode(base32Encode(Buffer.from('hello world')))!.toString()).toBe('hello world');
    expect(base32Decode('JBSWY3DP')!.toString()).toBe('Hello');
    expect(base32Decode('not base32!')).toBeUndefined();
  });
});

describe('PKCE and at_hash', () => {
  it('computes S256 as in RFC 7636 Appendix B', () => {
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
    expect(s256Challenge(verifier)).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
    expect(verifierMatches(verifier, 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')).toBe(true);
    expect(verifierMatches(`${verifier.slice(0, -1)}x`, 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')).toBe(false);
    expect(isPkceValue('short')).toBe(false);
    expect(isPkceValue('a'.repeat(129))).toBe(false);
  });
  it('takes the left half of SHA-256 (RS256, ES256) or SHA-512 (EdDSA)', () => {
    const token = 'dNZX1hEZ9wBCzNL40Upu646bdzQA';
    expect(atHash(token, 'RS256')).toBe(createHash('sha256').update(token).digest().subarray(0, 16).toString('base64url'));
    expect(atHash(token, 'ES256')).toBe(atHash(token, 'RS256'));
    expect(atHash(token, 'EdDSA')).toBe(createHash('sha512').update(token).digest().subarray(0, 32).toString('base64url'));
  });
});

describe('prompt, max_age, response modes', () => {
  it('parses prompt as a set; none stands alone', () => {
    expect([...parsePrompt('login select_account')]).toEqual(['login', 'select_account']);
    expect(() => parsePrompt('none login')).toThrow(/none/);
    expect(() => parsePrompt('bogus')).toThrow();
    expect(parseMaxAge('0')).toBe(0);
    expect(() => parseMaxAge('1.5')).toThrow();
  });
  it('picks the default per response type, ignores invalid modes and never uses query for tokens', () => {
    expect(chooseResponseMode(undefined, 'code')).toBe('query');
    expect(chooseResponseMode(undefined, 'id_token')).toBe('fragment');
    expect(chooseResponseMode('query', 'id_token token')).toBe('fragment');
    expect(chooseResponseMode('bogus', 'code')).toBe('query');
    expect(chooseResponseMode('form_post', 'id_token')).toBe('form_post');
  });
  it('delivers in query (keeping the URI query), fragment, or as form_post fields', () => {
    expect(deliver('https://rp.example/cb?x=1', 'query', { code: 'c', state: undefined })).toEqual({ kind: 'redirect', location: 'https://rp.example/cb?x=1&code=c' });
    expect(deliver('https://rp.example/cb', 'fragment', { id_token: 'a b' })).toEqual({ kind: 'redirect', location: 'https://rp.example/cb#id_token=a+b' });
    expect(deliver('https://rp.example/cb', 'form_post', { code: 'c' })).toEqual({ kind: 'form_post', action: 'https://rp.example/cb', params: [['code', 'c']] });
  });
});

describe('redirect URIs', () => {
  it('match exactly, or by glob in dev mode only', () => {
    expect(matchesRegistered('https://a.example/cb', ['https://a.example/cb'], false)).toBe(true);
    expect(matchesRegistered('https://a.example/cb/', ['https://a.example/cb'], false)).toBe(false);
    expect(matchesRegistered('http://localhost:3000/cb', ['http://localhost:*/cb'], false)).toBe(false);
    expect(matchesRegistered('http://localhost:3000/cb', ['http://localhost:*/cb'], true)).toBe(true);
    expect(matchesRegistered('http://localhost:3000/a/b', ['http://localhost:*/*'], true)).toBe(false);
    expect(matchesRegistered('http://localhost:3000/a/b', ['http://localhost:*/**'], true)).toBe(true);
    // A glob may match text that is not a URL: refused rather than redirected to.
    expect(matchesRegistered('http://localhost:99999/cb', ['http://localhost:*/cb'], true)).toBe(false);
    // native apps: loopback redirects match on any port, nothing else loosens
    expect(matchesRegistered('http://[::1]:6123/cb', ['http://[::1]/cb'], false, true)).toBe(true);
    expect(matchesRegistered('http://[::1]:6123/cb', ['http://[::1]/cb'], false, false)).toBe(false);
    expect(matchesRegistered('http://evil.example:6123/cb', ['http://evil.example/cb'], false, true)).toBe(false);
  });
});

describe('authorization request validation order', () => {
  const app = {
    id: 'app',
    projectId: 'p',
    clientId: 'client',
    state: 'APP_STATE_ACTIVE',
    oidc: {
      redirectUris: ['https://rp.example/cb'],
      responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
      grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
      authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
      devMode: false,
    },
  } as unknown as AppRecord;
  const dir: AuthorizeDirectory = {
    app: (id) => (id === 'client' ? app : undefined),
    resolveProject: () => undefined,
    orgById: () => undefined,
    orgByDomain: () => undefined,
    resources: (values) => parseResources(values),
    audienceAllowed: () => true,
  };
  const params = (p: Record<string, string | string[]>) => new Map(Object.entries(p).map(([k, v]) => [k, Array.isArray(v) ? v : [v]]));
  const base = { client_id: 'client', redirect_uri: 'https://rp.example/cb', response_type: 'code', scope: 'openid', state: 's' };

  it('shows a page until client and redirect_uri are known good, then redirects', () => {
    expect(validateAuthorizeRequest(params({ ...base, client_id: 'other' }), dir).kind).toBe('page');
    expect(validateAuthorizeRequest(params({ ...base, redirect_uri: 'https://evil.example/' }), dir).kind).toBe('page');
    expect(validateAuthorizeRequest(params({ ...base, redirect_uri: ['https://rp.example/cb', 'https://rp.example/cb'] }), dir).kind).toBe('page');
    const repeated = validateAuthorizeRequest(params({ ...base, state: ['a', 'b'] }), dir);
    expect(repeated).toMatchObject({ kind: 'redirect-error', error: 'invalid_request' });
    expect(validateAuthorizeRequest(params(base), dir).kind).toBe('ok');
  });
  it('treats prompt=login as max_age=0 and keeps hints', () => {
    const result = validateAuthorizeRequest(params({ ...base, prompt: 'login', login_hint: 'a+b@x.example' }), dir);
    expect(result.kind === 'ok' && result.request.maxAge).toBe(0);
    expect(result.kind === 'ok' && result.request.loginHint).toBe('a+b@x.example');
  });
});

describe('login UI helpers', () => {
  it('chooses the locale from ui_locales, then Accept-Language q-values, then English', () => {
    expect(chooseLocale('fr de-CH', 'en')).toBe('de');
    expect(chooseLocale(undefined, 'fr;q=0.9, de;q=0.8, en;q=0.7')).toBe('de');
    expect(chooseLocale(undefined, 'en;q=0.5, de;q=0.9')).toBe('de');
    expect(chooseLocale('ja', 'ja, zh')).toBe('en');
  });
  it('escapes every interpolated value', () => {
    const name = '<script>alert("x")</script>';
    expect(html`<p title="${name}">${name}</p>`.text).toBe('<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</p>');
    expect(html`<div>${html`<b>${'&'}</b>`}</div>`.text).toBe('<div><b>&amp;</b></div>');
  });
});

describe('project access checks', () => {
  it("apply hasProjectCheck (the user's org) and projectRoleCheck (a grant on the project)", async () => {
    const { projectAccessDenied } = await import('../../src/protocol/project-access.js');
    const project = { id: 'p1', orgId: 'o1', hasProjectCheck: false, projectRoleCheck: false };
    expect(projectAccessDenied(project, { orgId: 'o2' }, [])).toBeUndefined();
    expect(projectAccessDenied({ ...project, hasProjectCheck: true }, { orgId: 'o2' }, [])).toMatch(/organization/);
    expect(projectAccessDenied({ ...project, hasProjectCheck: true }, { orgId: 'o1' }, [])).toBeUndefined();
    expect(projectAccessDenied({ ...project, projectRoleCheck: true }, { orgId: 'o1' }, [])).toMatch(/grant/);
    expect(projectAccessDenied({ ...project, projectRoleCheck: true }, { orgId: 'o1' }, [{ projectId: 'p1' }])).toBeUndefined();
  });
});
