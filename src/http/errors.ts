import { ApiError, type ApiErrorKind } from '../model/errors.js';
import type { Locale } from '../model/authorization.js';
import { OAuthError } from '../protocol/errors.js';
import { log } from '../util/log.js';
import { errorPage } from '../ui/pages.js';
import { translator, type TextKey } from '../ui/i18n.js';
import { htmlResponse } from './html.js';
import { json, jsonNoStore } from './responses.js';
import type { ErrorStyle, Response } from './types.js';

/**
 * The one place where failures become HTTP responses, per surface (the route's ErrorStyle):
 * OAuthError → OAuth JSON, ApiError → ZITADEL's `{code, message, details}` body, both → a page in
 * the browser's language on HTML routes. 404, 405 and 503 come through here too. Anything else is
 * a bug: logged, and answered with a generic error that leaks nothing.
 */
const GRPC: Record<ApiErrorKind, { code: number; status: number }> = {
  InvalidArgument: { code: 3, status: 400 },
  FailedPrecondition: { code: 9, status: 400 },
  Unauthenticated: { code: 16, status: 401 },
  PermissionDenied: { code: 7, status: 403 },
  NotFound: { code: 5, status: 404 },
  AlreadyExists: { code: 6, status: 409 },
  DeadlineExceeded: { code: 4, status: 504 },
  ResourceExhausted: { code: 8, status: 429 },
  Unimplemented: { code: 12, status: 501 },
  Internal: { code: 13, status: 500 },
  MethodNotAllowed: { code: 12, status: 405 },
  Unavailable: { code: 14, status: 503 },
};

/** The OAuth error code a domain error takes on an OAuth endpoint. */
const OAUTH_CODE: Partial<Record<ApiErrorKind, OAuthError['error']>> = {
  Internal: 'server_error',
  Unavailable: 'temporarily_unavailable',
};

/** The page's headline per status; the error's own text follows it. */
const PAGE_TEXT: Record<number, TextKey> = { 404: 'error.notFound', 405: 'error.method', 503: 'error.unavailable' };

/** Headers every surface sends with a status (a client may retry a 503 after a second). */
function statusHeaders(status: number, extra?: Record<string, string>): Record<string, string> | undefined {
  if (status === 503) return { ...extra, 'Retry-After': '1' };
  return extra;
}

function apiErrorBody(error: ApiError): { status: number; body: unknown } {
  const { code, status } = GRPC[error.kind];
  return {
    status,
    body: {
      code,
      message: `${error.message} (${error.errorId})`,
      details: [{ '@type': 'type.googleapis.com/zitadel.v1.ErrorDetail', id: error.errorId, message: error.message }],
    },
  };
}

function oauthErrorResponse(error: OAuthError): Response {
  return jsonNoStore(error.status, { error: error.error, error_description: error.description }, statusHeaders(error.status, error.headers));
}

function asOAuthError(error: ApiError): OAuthError {
  const status = GRPC[error.kind].status;
  return new OAuthError(OAUTH_CODE[error.kind] ?? 'invalid_request', error.message, status === 405 || status === 404 ? { status } : {});
}

function asApiError(error: OAuthError): ApiError {
  const kind: ApiErrorKind =
    error.status === 401 ? 'Unauthenticated' : error.status === 403 ? 'PermissionDenied' : error.status === 503 ? 'Unavailable' : error.status >= 500 ? 'Internal' : 'InvalidArgument';
  return new ApiError(kind, `HTTP-${error.error}`, error.description);
}

function page(locale: Locale, status: number, message: string | undefined): Response {
  const t = translator(locale);
  const headline = PAGE_TEXT[status] ? t(PAGE_TEXT[status]) : status >= 500 ? t('error.unexpected') : undefined;
  // The headline is in the reader's language; a protocol error's own (English) text explains it.
  return htmlResponse(status, errorPage(locale, headline ?? message ?? t('error.unexpected'), headline ? message : undefined), statusHeaders(status));
}

/** `localeOf` is asked only for an HTML answer (it reads the request's ui_locales and Accept-Language). */
export function errorResponse(style: ErrorStyle, error: unknown, localeOf: () => Locale = () => 'en'): Response {
  if (!(error instanceof OAuthError) && !(error instanceof ApiError)) {
    log.error('unhandled error', { error: error instanceof Error ? error.stack : String(error) });
    if (style === 'html') return page(localeOf(), 500, undefined);
    return style === 'oauth' ? oauthErrorResponse(new OAuthError('server_error', 'unexpected condition')) : json(500, { code: 13, message: 'internal error (HTTP-500)', details: [] });
  }
  if (style === 'html') {
    // Browser endpoints (authorize, login, end session): a readable page, never a redirect.
    if (error instanceof OAuthError) return page(localeOf(), error.status >= 500 && error.status !== 503 ? 500 : error.status === 503 ? 503 : 400, error.description);
    return page(localeOf(), GRPC[error.kind].status, error.kind === 'Internal' ? undefined : error.message);
  }
  if (style === 'oauth') return oauthErrorResponse(error instanceof OAuthError ? error : asOAuthError(error));
  const { status, body } = apiErrorBody(error instanceof ApiError ? error : asApiError(error));
  return json(status, body, statusHeaders(status));
}
