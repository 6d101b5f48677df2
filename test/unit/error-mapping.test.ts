import { describe, expect, it } from 'vitest';
import { setLogLevel } from '../../src/util/log.js';
import { errorResponse } from '../../src/http/errors.js';
import { ApiError, type ApiErrorKind } from '../../src/model/errors.js';
import { OAuthError } from '../../src/protocol/errors.js';

setLogLevel('silent'); // the unexpected-error cases log by design

/**
 * One error model mapped once per surface (src/http/errors.ts): every domain error kind and the
 * protocol's OAuthError on OAuth JSON, ZITADEL API JSON and the localized HTML page.
 */
const body = (r: { body?: string | Buffer }) => String(r.body);

describe('domain errors on every surface', () => {
  const cases: [ApiErrorKind, number, number, string][] = [
    // kind, HTTP status, ZITADEL code, OAuth error
    ['InvalidArgument', 400, 3, 'invalid_request'],
    ['FailedPrecondition', 400, 9, 'invalid_request'],
    ['Unauthenticated', 401, 16, 'invalid_request'],
    ['PermissionDenied', 403, 7, 'invalid_request'],
    ['NotFound', 404, 5, 'invalid_request'],
    ['AlreadyExists', 409, 6, 'invalid_request'],
    ['DeadlineExceeded', 504, 4, 'invalid_request'],
    ['Unimplemented', 501, 12, 'invalid_request'],
    ['Internal', 500, 13, 'server_error'],
    ['MethodNotAllowed', 405, 12, 'invalid_request'],
    ['Unavailable', 503, 14, 'temporarily_unavailable'],
  ];
  it.each(cases)('%s: %i, ZITADEL code %i, OAuth %s', (kind, status, code, oauth) => {
    const error = new ApiError(kind, 'TEST-1', 'what went wrong');
    const api = errorResponse('api', error);
    expect(api.status).toBe(status);
    expect(JSON.parse(body(api))).toMatchObject({ code, message: 'what went wrong (TEST-1)' });

    const onOAuth = errorResponse('oauth', error);
    expect(JSON.parse(body(onOAuth)).error).toBe(oauth);
    expect(onOAuth.status).toBe(oauth === 'invalid_request' && status !== 404 && status !== 405 ? 400 : status);

    const page = errorResponse('html', error, () => 'de');
    expect(page.status).toBe(status);
    expect(page.headers?.['Content-Type'] ?? page.headers?.['content-type']).toMatch(/text\/html/);
    expect(body(page)).toContain('lang="de"');
    expect(body(page)).toContain('Etwas ist schiefgelaufen');
    // An internal error's text stays in the log.
    if (kind === 'Internal') expect(body(page)).not.toContain('what went wrong');
    else expect(body(page)).toContain('what went wrong');

    for (const response of [api, onOAuth, page]) {
      if (status === 503) expect(response.headers?.['Retry-After']).toBe('1');
      else expect(response.headers?.['Retry-After']).toBeUndefined();
    }
  });

  it('an OAuth error keeps its code on OAuth endpoints and becomes a ZITADEL body on the API', () => {
    const error = new OAuthError('invalid_client', 'client authentication failed');
    const onOAuth = errorResponse('oauth', error);
    expect(onOAuth.status).toBe(401);
    expect(JSON.parse(body(onOAuth))).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
    const api = errorResponse('api', error);
    expect(api.status).toBe(401);
    expect(JSON.parse(body(api)).code).toBe(16);
    const page = errorResponse('html', new OAuthError('temporarily_unavailable', 'shutting down'), () => 'en');
    expect(page.status).toBe(503);
    expect(body(page)).toContain('The service is restarting');
  });

  it('an unexpected error leaks nothing on any surface; the page is in the reader language', () => {
    const bug = new Error('secret internals');
    for (const style of ['oauth', 'api', 'html'] as const) {
      const r = errorResponse(style, bug, () => 'de');
      expect(r.status).toBe(500);
      expect(body(r)).not.toContain('secret internals');
    }
    expect(body(errorResponse('html', bug, () => 'de'))).toContain('Ein unerwarteter Fehler ist aufgetreten.');
    expect(body(errorResponse('html', bug, () => 'en'))).toContain('An unexpected error occurred.');
  });
});
