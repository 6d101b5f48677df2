/**
 * HTTP methods of `sesame_http_requests_total`; anything else counts as `other`.
 *
 * Like every label value a metric can carry, fixed here (this module): nothing a client sends
 * becomes a label, so a scrape's size is bounded whatever the traffic. Each value has a slot (its
 * index) in the per-thread counters (layout.ts); the hot path turns what it knows into a slot
 * without building a string or looking anything up by a client's input.
 */
export const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'other'] as const;

export function methodSlot(method: string): number {
  switch (method) {
    case 'GET':
      return 0;
    case 'POST':
      return 1;
    case 'PUT':
      return 2;
    case 'DELETE':
      return 3;
    case 'PATCH':
      return 4;
    case 'HEAD':
      return 5;
    case 'OPTIONS':
      return 6;
    default:
      return 7;
  }
}

/**
 * Status labels: the codes Sesame answers with, by number; any other code by its class (`4xx`), and
 * `aborted` for a request whose client went away before the answer.
 */
const EXACT_STATUSES = [200, 201, 204, 301, 302, 303, 304, 307, 308, 400, 401, 403, 404, 405, 409, 410, 412, 413, 415, 422, 429, 500, 501, 502, 503, 504];
export const STATUSES: readonly string[] = [...EXACT_STATUSES.map(String), '1xx', '2xx', '3xx', '4xx', '5xx', 'other', 'aborted'];
export const ABORTED_STATUS_SLOT = STATUSES.length - 1;
const OTHER_STATUS_SLOT = STATUSES.length - 2;

/** status code → slot, for 0..599. */
const STATUS_SLOTS = new Uint8Array(600).fill(OTHER_STATUS_SLOT);
for (let code = 100; code < 600; code++) STATUS_SLOTS[code] = STATUSES.indexOf(`${Math.floor(code / 100)}xx`);
EXACT_STATUSES.forEach((code, slot) => {
  STATUS_SLOTS[code] = slot;
});

export function statusSlot(status: number): number {
  return status >= 0 && status < 600 ? STATUS_SLOTS[status | 0]! : OTHER_STATUS_SLOT;
}

/** Upper bounds (seconds) of the request duration buckets: from a cached introspection to a slow import. */
export const REQUEST_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;
/** Upper bounds (seconds) of the LMDB commit buckets: a batched commit, then an fsync on slow disks. */
export const COMMIT_SECONDS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1] as const;
/** Figures of a thread's PostgreSQL pool (gauges, as of its last statement). */
export const POSTGRES_POOL_STATS = ['total', 'idle', 'waiting'] as const;

/** Upper bounds of the worker pool's batch sizes (items per task; the largest batch is 256). */
export const BATCH_ITEMS = [1, 2, 4, 8, 16, 32, 64, 128, 256] as const;

/** Grants of `sesame_tokens_issued_total`: the token endpoint's grant types, and the implicit flow at authorize. */
export const GRANTS = ['client_credentials', 'authorization_code', 'refresh_token', 'jwt_bearer', 'token_exchange', 'device_code', 'implicit'] as const;
export type GrantLabel = (typeof GRANTS)[number];

/** Kinds of token of `sesame_tokens_issued_total`. */
export const TOKEN_TYPES = ['opaque_access_token', 'jwt_access_token', 'id_token', 'refresh_token'] as const;
export type TokenTypeLabel = (typeof TOKEN_TYPES)[number];

export const INTROSPECTION_RESULTS = ['active', 'inactive'] as const;
/** Why a sign-in attempt failed: a wrong password (or unknown login name), a wrong TOTP code, a locked account. */
export const SIGN_IN_FAILURES = ['password', 'otp', 'locked', 'idp', 'webauthn'] as const;
export type SignInFailure = (typeof SIGN_IN_FAILURES)[number];
/** The factor whose failures locked an account. */
export const LOCKOUT_FACTORS = ['password', 'otp'] as const;
export type LockoutFactor = (typeof LOCKOUT_FACTORS)[number];
/** What happened to mails: queued (by any thread), sent, an attempt failed (retried later), given up. */
export const MAIL_RESULTS = ['queued', 'sent', 'failed_attempt', 'given_up'] as const;
export type MailResult = (typeof MAIL_RESULTS)[number];
/** What the worker pool batches: JWT signatures, assertion signature checks. */
export const BATCH_KINDS = ['sign', 'verify'] as const;
export type BatchKind = (typeof BATCH_KINDS)[number];
/** Per-thread event-loop delay statistics over the last window (loop-lag.ts). */
export const LOOP_LAG_STATS = ['mean', 'p50', 'p99', 'max'] as const;
/** The V8 heap figures each HTTP thread publishes: the heap's size (what it holds of the process's memory), its live part, and memory outside it that its objects own (buffers). */
export const HEAP_STATS = ['total', 'used', 'external'] as const;
