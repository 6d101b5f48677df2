import { ApiError } from '../model/errors.js';
import { OAuthError } from '../protocol/errors.js';
import type { RelayedError } from './protocol.js';

/** What a directory writer's decision threw, for the thread that asked. */
export function relayedError(error: unknown): RelayedError {
  if (error instanceof ApiError) return { message: error.message, kind: error.kind, errorId: error.errorId };
  if (error instanceof OAuthError) return { message: error.message, oauth: { error: error.error, description: error.description, status: error.status, headers: error.headers } };
  return { message: error instanceof Error ? error.message : String(error) };
}

/** The error again, on the thread that asked: answered as if thrown there. */
export function errorOf(relayed: RelayedError): Error {
  if (relayed.oauth) {
    const { error, description, status, headers } = relayed.oauth;
    return new OAuthError(error, description, { status, ...(headers ? { headers } : {}) });
  }
  if (relayed.kind && relayed.errorId) return new ApiError(relayed.kind, relayed.errorId, relayed.message);
  return new Error(relayed.message);
}
