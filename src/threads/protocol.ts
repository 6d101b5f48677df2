import type { Config } from '../config.js';
import type { ForwardedRequest, ForwardedResponse, RouteDescriptor } from '../http/server.js';
import type { MetricsMemory } from '../observability/metrics-memory.js';
import type { ApiErrorKind } from '../model/errors.js';
import type { CryptoPool } from '../workers/pool.js';
import type { OAuthErrorCode } from '../protocol/errors.js';

/** What the main thread hands an HTTP acceptor thread at start (structured-clone safe). */
export interface AcceptorData {
  /** Which acceptor this is (1..n; the main thread is 0). */
  index: number;
  config: Config;
  issuer: string;
  /** The port the main thread bound (the configured one, or the one the OS chose for 0). */
  port: number;
  /** The main thread's routes, in mount order (mounted once the server is ready): forwarded requests name theirs by index. */
  routes: RouteDescriptor[];
  /** Storage's shared counters (LMDB: commits, directory version; PostgreSQL: the last directory change committed). */
  sharedCounters: SharedArrayBuffer;
  /** The main thread's clock when it is not the system clock (tests). */
  clockCell: SharedArrayBuffer | undefined;
  /** The metrics every HTTP thread counts into (its own slice: `index`), when metrics are on. */
  metrics: MetricsMemory | undefined;
}

/** Messages from an acceptor thread to the main thread. */
export type FromAcceptor =
  /** Its copy of the directory is loaded: it joins the port when told (`join`). */
  | { type: 'prepared' }
  /** It listens; `osThreadId`: its OS thread id (util/os-thread-id.ts), where there is one. */
  | { type: 'listening'; osThreadId?: number | undefined }
  | { type: 'failed'; message: string }
  /** `stale`: handed over while this thread's copy of the directory was behind (being reloaded), not for what the request needs. */
  | { type: 'forward'; id: number; request: ForwardedRequest; stale: boolean }
  /** Work of the main thread's for this thread (the password pool's): see MainThreadWork. */
  | { type: 'ask'; id: number; part: keyof MainThreadWork; method: string; args: unknown[] }
  | { type: 'log'; line: string }
  /** `wholeLoads`: how often it loaded its copy of the directory whole. */
  | { type: 'served'; count: number; wholeLoads: number }
  | { type: 'drained' };

/** Messages from the main thread to an acceptor thread. */
export type ToAcceptor =
  /** The main thread serves and is ready: join the port. */
  | { type: 'join' }
  | { type: 'reply'; id: number; response: ForwardedResponse }
  | { type: 'failed'; id: number; message: string }
  /** The main thread's answer to an `ask`, or what it threw (an ApiError keeps its kind and id). */
  | { type: 'answer'; id: number; value: unknown }
  | { type: 'refused'; id: number; error: RelayedError }
  | { type: 'served' }
  | { type: 'drain'; timeoutMs: number };

/** The password pool's work an acceptor thread asks of the main thread's pool. */
export type PasswordPoolWork = Pick<CryptoPool, 'hashPassword' | 'hashPasswordInBulk' | 'verifyPassword'>;

/**
 * What the main thread does for the acceptor threads: the password pool's work (one pool per
 * process; only CPU work, what it decides is decided in the store on the asking thread).
 */
export interface MainThreadWork {
  passwords: PasswordPoolWork;
}

/** The methods an acceptor thread may ask for, by part: a message names one, it never runs code on the main thread. */
export const MAIN_THREAD_METHODS: { readonly [W in keyof MainThreadWork]: ReadonlySet<keyof MainThreadWork[W]> } = {
  passwords: new Set<keyof PasswordPoolWork>(['hashPassword', 'hashPasswordInBulk', 'verifyPassword']),
};

/**
 * An error crossing threads: an ApiError keeps its kind and id, an OAuthError its code, status and
 * headers (the answer it maps to); anything else its message.
 */
export interface RelayedError {
  message: string;
  kind?: ApiErrorKind;
  errorId?: string;
  oauth?: { error: OAuthErrorCode; description: string; status: number; headers: Record<string, string> | undefined };
}

/** Asks the main thread for one piece of its work. */
export type AskMainThread = <W extends keyof MainThreadWork>(part: W, method: keyof MainThreadWork[W] & string, args: unknown[]) => Promise<unknown>;
