import { ApiError, type ApiErrorKind } from '../model/errors.js';
import { OAuthError } from '../protocol/errors.js';
import { log } from '../util/log.js';
import { errorPage } from '../ui/pages.js';
import { htmlResponse } from './html.js';
import { json, jsonNoStore } from './responses.js';
import type { ErrorStyle, Response } from './types.js';

/**
 * The one place where failures become HTTP responses: OAuthError → OAuth JSON, ApiError →
 * ZITADEL's `{code, message, details}` body; anything else is a bug, logged and answered
 * with a generic server_error that leaks nothing.
 */
const GRPC: Record<ApiErrorKind, { code: number; status: number }> = {
  InvalidArgument: { code: 3, status: 400 },
  FailedPrecondition: { code: 9, status: 400 },
  Unauthenticated: { code: 16, status: 401 },
  PermissionDenied: { code: 7, status: 403 },
  NotFound: { code: 5, status: 404 },
  AlreadyExists: { code: 6, status: 409 },
  DeadlineExceeded: { code: 4, status: 504 },
  Unimplemented: { code: 12, status: 501 },
  Internal: { code: 13, status: 500 },
};

export function apiErrorBody(error: ApiError): { status: number; body: unknown } {
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

export function oauthErrorResponse(error: OAuthError): Response {
  return jsonNoStore(
    error.status,
    { error: error.error, error_description: error.description },
    error.headers,
  );
}

export function errorResponse(style: ErrorStyle, error: unknown): Response {
  if (style === 'html') {
    // Browser endpoints (authorize, login, end session): a readable page, never a redirect.
    if (error instanceof OAuthError || error instanceof ApiError) {
      const status = error instanceof OAuthError ? (error.status >= 500 ? 500 : 400) : GRPC[error.kind].status;
      return htmlResponse(status, errorPage('en', error instanceof OAuthError ? error.description : error.message));
    }
    log.error('unhandled error', { error: error instanceof Error ? error.stack : String(error) });
    return htmlResponse(500, errorPage('en', 'An unexpected error occurred.'));
  }
  if (style === 'oauth') {
    if (error instanceof OAuthError) return oauthErrorResponse(error);
    if (error instanceof ApiError) {
      return oauthErrorResponse(new OAuthError(error.kind === 'Internal' ? 'server_error' : 'invalid_request', error.message));
    }
  } else {
    if (error instanceof ApiError) {
      const { status, body } = apiErrorBody(error);
      return json(status, body);
    }
    if (error instanceof OAuthError) {
      const kind: ApiErrorKind = error.status === 401 ? 'Unauthenticated' : error.status === 403 ? 'PermissionDenied' : 'InvalidArgument';
      const { status, body } = apiErrorBody(new ApiError(kind, 'HTTP-' + error.error, error.description));
      return json(status, body);
    }
  }
  log.error('unhandled error', { error: error instanceof Error ? error.stack : String(error) });
  return style === 'oauth'
    ? oauthErrorResponse(new OAuthError('server_error', 'unexpected condition'))
    : json(500, { code: 13, message: 'internal error (HTTP-500)', details: [] });
}
