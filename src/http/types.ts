/** The request and response shapes route modules see; uWS details stay in server.ts. */
export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'HEAD' | 'OPTIONS';

export interface Request {
  readonly method: Method | string;
  readonly path: string;
  /** Raw query string without the leading `?`. */
  readonly query: string;
  /** Path parameters in pattern order. */
  readonly params: readonly string[];
  /** Lower-case header names; a repeated header is listed in `repeatedHeaders`. */
  readonly headers: Readonly<Record<string, string>>;
  readonly repeatedHeaders: ReadonlySet<string>;
  readonly body: Buffer;
  /** The client's IP address as text, only on routes with `peerAddress` (for limits per address). */
  readonly peer: string | undefined;
}

export interface Response {
  status: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export type Handler = (req: Request) => Response | Promise<Response>;

/** How failures of a route are reported: OAuth JSON, ZITADEL API JSON, or an HTML page. */
export type ErrorStyle = 'oauth' | 'api' | 'html';

export interface Route {
  pattern: string;
  methods: Partial<Record<Method, Handler>>;
  errorStyle: ErrorStyle;
  /** Largest accepted request body in bytes. */
  maxBody?: number;
  /**
   * Cross-origin callable from browsers (single-page apps), no cookies, preflight answered: `true`
   * for any origin (public documents), or a check of the request's Origin (then echoed, with
   * `Vary: Origin`). Only for endpoints that authenticate by token or client credentials, never by cookie.
   */
  cors?: true | ((origin: string) => boolean);
  /**
   * Runs on the method and headers before the body is read (e.g. authentication of a route that
   * takes large bodies): when it throws, the request is answered without uploading the body; when
   * it returns a promise (a check that reads the store), the upload starts meanwhile and a rejection
   * answers at once, mid-upload.
   */
  beforeBody?: (req: Request) => void | Promise<void>;
  /**
   * Takes every method as it comes (no preflight, no method check here): on an HTTP acceptor
   * thread, a route the main thread serves; it answers with what the main thread answered.
   */
  forward?: Handler;
  /** The handler reads `req.peer` (the connection's remote address), e.g. to limit guesses per address. */
  peerAddress?: true;
  /**
   * What the copies the route reads must wait for before they answer (a thread on PostgreSQL after
   * a lost notification, or behind its node: see FollowedOnPostgres.current); its handlers and
   * `beforeBody` already wait, this is for what the server answers itself (a CORS preflight).
   */
  current?: () => Promise<void> | undefined;
}
