/**
 * The domain's errors: a kind (gRPC's canonical codes, as ZITADEL reports them, plus the two HTTP
 * conditions every surface shares) and a stable id, no wire format. Actors, rules and services
 * throw these (protocol code throws OAuthError); src/http/errors.ts maps both once per surface:
 * OAuth JSON, ZITADEL API JSON or a localized HTML page.
 */
export type ApiErrorKind =
  | 'InvalidArgument'
  | 'FailedPrecondition'
  | 'Unauthenticated'
  | 'PermissionDenied'
  | 'NotFound'
  | 'AlreadyExists'
  | 'DeadlineExceeded'
  /** A bound on how often something may be done was reached (HTTP 429). */
  | 'ResourceExhausted'
  | 'Unimplemented'
  | 'Internal'
  /** No handler for the request's method (HTTP 405). */
  | 'MethodNotAllowed'
  /** Shutting down or not ready (HTTP 503). */
  | 'Unavailable';

export class ApiError extends Error {
  constructor(
    readonly kind: ApiErrorKind,
    /** ZITADEL-style error id, e.g. `USER-Ss9f2`; stable per failure site. */
    readonly errorId: string,
    message: string,
  ) {
    super(message);
  }
}

export const notFound = (id: string, message: string) => new ApiError('NotFound', id, message);

/** Every place for registered clients in the project (RFC 7591) is held: its quota is reached. */
export class QuotaReached extends ApiError {
  constructor(readonly quota: number) {
    super('FailedPrecondition', 'APP-Qu0ta', `the project holds the most registered clients allowed (${quota})`);
  }
}

/**
 * A write refused because the record changed since the copy it was decided on read it (another
 * thread, later another node, wrote it): nothing was written. The actor decides again on the
 * record as stored (retried a few times); what still conflicts reaches the caller as
 * FailedPrecondition.
 */
export class WriteConflict extends ApiError {
  constructor(
    readonly key: string,
    message = `${key} was changed meanwhile; nothing was written, try again`,
    /** The directory store the record is in, when it is a record (not a unique key or the key set). */
    readonly store?: string,
  ) {
    super('FailedPrecondition', 'STORE-C0nfl', message);
  }
}
export const alreadyExists = (id: string, message: string) => new ApiError('AlreadyExists', id, message);
export const invalidArgument = (id: string, message: string) => new ApiError('InvalidArgument', id, message);
export const resourceExhausted = (id: string, message: string) => new ApiError('ResourceExhausted', id, message);
export const preconditionFailed = (id: string, message: string) => new ApiError('FailedPrecondition', id, message);

/**
 * The work needs state only the main thread owns (codes, refresh rotation, the assertion replay
 * guard, the pool): thrown on an HTTP acceptor thread before anything was changed, so the
 * request is handed over to the main thread and served there as a whole.
 */
export class NeedsOwner extends Error {
  constructor(what: string) {
    super(`${what} is decided by the main thread`);
  }
}

/**
 * The store decided for another caller first (another thread's or node's use of something single
 * use: a code, a device code, a pushed request, a refresh token's rotation). The caller's use is a
 * second one: a replay, or for a refresh token a use to judge again.
 */
export class DecidedElsewhere extends Error {
  constructor(readonly what: string) {
    super(`${what} already used (another use came first)`);
  }
}

/**
 * The store could not be reached or did not answer in time (PostgreSQL down, restarting, its
 * connections all taken): nothing was decided, the caller may try again (HTTP 503 on every surface).
 */
export class StoreUnavailable extends ApiError {
  constructor(readonly detail: string) {
    super('Unavailable', 'STORE-Unav1', 'the database cannot be reached now; try again shortly');
  }
}
