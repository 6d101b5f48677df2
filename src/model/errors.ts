/**
 * Errors of the provisioning/admin API, in gRPC terms as ZITADEL reports them. Actors throw these;
 * the HTTP layer maps them to ZITADEL's error body and status in one place (src/http/errors.ts).
 */
export type ApiErrorKind =
  | 'InvalidArgument'
  | 'FailedPrecondition'
  | 'Unauthenticated'
  | 'PermissionDenied'
  | 'NotFound'
  | 'AlreadyExists'
  | 'DeadlineExceeded'
  | 'Unimplemented'
  | 'Internal';

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
export const alreadyExists = (id: string, message: string) => new ApiError('AlreadyExists', id, message);
export const invalidArgument = (id: string, message: string) => new ApiError('InvalidArgument', id, message);
export const preconditionFailed = (id: string, message: string) => new ApiError('FailedPrecondition', id, message);
