import uWS from 'uWebSockets.js';
import { clientAddress, trustedProxies } from '../util/client-address.js';
import { STATUS_CODES } from 'node:http';
import { createServer } from 'node:net';
import { OAuthError } from '../protocol/errors.js';
import { ApiError, NeedsOwner } from '../model/errors.js';
import { log } from '../util/log.js';
import { countingRequests, recordAbortedRequest, recordRequest } from '../observability/recorder.js';
import { endRequestTrace, inRequestTrace, startRequestTrace, type RequestTrace } from '../observability/tracing.js';
import { errorResponse } from './errors.js';
import type { ErrorStyle, Handler, Method, Request, Response, Route } from './types.js';
import { chooseLocale } from '../ui/i18n.js';
import type { Locale } from '../model/authorization.js';

/**
 * The uWebSockets.js front end: reads the request (headers synchronously, body with a size
 * cap), hands a plain Request to the route's handler and writes its Response corked. It tracks
 * requests in flight so shutdown can stop accepting and still finish what it started.
 */
const DEFAULT_MAX_BODY = 64 * 1024;
const STATUS_LINES = new Map<number, string>();
function statusLine(status: number): string {
  let line = STATUS_LINES.get(status);
  if (!line) STATUS_LINES.set(status, (line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`));
  return line;
}

const EMPTY = Buffer.alloc(0);
/** The metrics slot of a request forwarded by an acceptor thread: counted there, where it arrived. */
const NOT_COUNTED = -1;
/** uWS.js exports LIBUS_LISTEN_EXCLUSIVE_PORT (1) at run time, not in its typings. */
const LISTEN_EXCLUSIVE_PORT = (uWS as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT?: number }).LIBUS_LISTEN_EXCLUSIVE_PORT ?? 1;
/** Declared body sizes from which the body is collected into one preallocated buffer. */
const PREALLOCATE_FROM = 1024 * 1024;
/** A body declared larger than this is answered as soon as its route's precheck refuses it (see serve). */
const ANSWER_EARLY_ABOVE = 64 * 1024;

export interface HttpServer {
  readonly port: number;
  /** Registers the routes (after listening: the issuer may depend on the bound port). */
  mount(routes: readonly Route[]): void;
  /** Requests received since start (for idle detection). */
  requestsServed(): number;
  /** Stops accepting connections, then resolves once every request in flight has been answered. */
  drain(timeoutMs: number): Promise<void>;
  /** Closes every connection at once (after drain: the idle keep-alive ones), so a thread's event loop can end. */
  close(): void;
  /** What an acceptor thread needs to know of each mounted route (in mount order) to serve or forward it. */
  routeTable(): RouteDescriptor[];
  /** Serves a request an acceptor thread received and forwarded, exactly as if it had been received here. */
  serveForwarded(request: ForwardedRequest): Promise<ForwardedResponse>;
}

export interface ServerOptions {
  /**
   * Several threads of this process listen on the port, and the kernel spreads connections over
   * them. `first`: the thread that binds first probes the port exclusively, so a port another
   * program holds is refused as before (and a second Sesame is refused, its own probe finding the
   * port taken). `join`: a thread binding the port the first one holds.
   */
  sharedPort?: 'first' | 'join';
  /** Runs as each request arrives, before anything reads state: reads must see what other threads committed. */
  beforeRequest?: () => void;
  /** Serves a request whose handler threw NeedsOwner (an acceptor thread forwards it to the main thread). */
  handOver?: (route: Route, request: Request) => Promise<Response>;
  /** Reverse proxies whose `X-Forwarded-For` names the client in `Request.peer` (SESAME_TRUSTED_PROXIES). */
  trustedProxies?: readonly string[];
}

/** A mounted route as an acceptor thread sees it: the handler stays on the main thread. */
export interface RouteDescriptor {
  pattern: string;
  errorStyle: ErrorStyle;
  maxBody: number | undefined;
  peerAddress: boolean;
}

/** What an acceptor thread needs to know of each route (in mount order), before or after they are mounted. */
export function describeRoutes(routes: readonly Route[]): RouteDescriptor[] {
  return routes.map((r) => ({ pattern: r.pattern, errorStyle: r.errorStyle, maxBody: r.maxBody, peerAddress: r.peerAddress === true }));
}

/** A request handed from an acceptor thread to the main thread (structured-clone safe). */
export interface ForwardedRequest {
  /** Index in routeTable(), or the error style of the unknown-path fallback. */
  route: number | ErrorStyle;
  method: string;
  path: string;
  query: string;
  /** Decoded path parameters. */
  params: string[];
  headers: Record<string, string>;
  repeatedHeaders: string[];
  body: Uint8Array;
  peer: string | undefined;
}

export interface ForwardedResponse {
  status: number;
  headers: [string, string][];
  body: string | Uint8Array;
}

/** The language of an error page: the request's ui_locales, else Accept-Language (never throws). */
function requestLocale(query: string, headers: Readonly<Record<string, string>>): Locale {
  const match = /(?:^|&)ui_locales=([^&]*)/.exec(query);
  let uiLocales: string | undefined;
  try {
    uiLocales = match ? decodeURIComponent(match[1]!.replace(/\+/g, ' ')) : undefined;
  } catch {
    uiLocales = undefined;
  }
  return chooseLocale(uiLocales, headers['accept-language']);
}

function bodyTooLarge(route: Route): Error {
  return route.errorStyle === 'oauth' ? new OAuthError('invalid_request', 'request body too large') : new ApiError('InvalidArgument', 'HTTP-413', 'request body too large');
}

export async function startHttpServer(host: string, port: number, options: ServerOptions = {}): Promise<HttpServer> {
  if (options.sharedPort === 'first') {
    if (port === 0) {
      // uWS shares only a given port (it binds port 0 without SO_REUSEPORT): the OS picks one,
      // and another is tried should something take it before uWS binds it.
      for (let attempt = 1; ; attempt++) {
        const chosen = await freePort(host).catch((error: NodeJS.ErrnoException) => {
          throw new ListenError(host, 0, error.code);
        });
        const server = await startHttpServer(host, chosen, options).catch((error: unknown) => {
          if (attempt < 3 && error instanceof ListenError && error.code === 'EADDRINUSE') return undefined;
          throw error;
        });
        if (server) return server;
      }
    }
    const code = await listenFailure(host, port);
    if (code) throw new ListenError(host, port, code);
  }
  const beforeRequest = options.beforeRequest;
  const handOver = options.handOver;
  const proxies = trustedProxies(options.trustedProxies ?? []);
  const app = uWS.App();
  const mounted: Route[] = [];
  const unknown = (errorStyle: ErrorStyle): Route => ({ pattern: '/*', methods: {}, errorStyle });
  const fallbacks: Record<ErrorStyle, Route> = { oauth: unknown('oauth'), html: unknown('html'), api: unknown('api') };
  let inFlight = 0;
  let served = 0;
  let draining = false;
  let onIdle: (() => void) | undefined;

  const finish = () => {
    inFlight--;
    if (inFlight === 0 && onIdle) onIdle();
  };

  const send = (res: uWS.HttpResponse, state: RequestState, response: Response) => {
    if (state.aborted) return;
    state.aborted = true; // a response is written at most once; uWS forbids touching res after
    res.cork(() => {
      res.writeStatus(statusLine(response.status));
      // A value carrying CR or LF would split the response (a header injected from request input): never written as is.
      if (response.headers) for (const name in response.headers) res.writeHeader(name, headerValue(response.headers[name]!));
      // Worked out as the answer leaves, not as the request arrives: the origins allowed are read from
      // the copies, which a thread on PostgreSQL brings up to date before it answers (Route.current).
      const cors = state.cors;
      if (cors === true) res.writeHeader('Access-Control-Allow-Origin', '*');
      else if (cors) {
        if (state.origin && cors(state.origin)) res.writeHeader('Access-Control-Allow-Origin', state.origin);
        // Per-origin answers differ, so caches must key on Origin.
        res.writeHeader('Vary', 'Origin');
      }
      if (draining) res.writeHeader('Connection', 'close');
      res.end(response.body ?? '', draining);
    });
  };

  /**
   * `slot`: the route's index in the mounted table, under which the request is counted (the table's
   * length for an unmatched path, NOT_COUNTED for one an acceptor thread forwarded).
   * `forwardedPeer`: a request an acceptor thread handed over comes with the client address it
   * worked out.
   */
  const serve = (route: Route, res: uWS.HttpResponse, raw: uWS.HttpRequest, paramCount: number, slot: number, forwardedPeer?: string) => {
    const state: RequestState = { aborted: false, finished: false, cors: route.cors, origin: undefined };
    inFlight++;
    served++;
    const counted = slot !== NOT_COUNTED && countingRequests();
    const startedAt = counted ? performance.now() : 0;
    const method = raw.getCaseSensitiveMethod().toUpperCase();
    let trace: RequestTrace | undefined;
    res.onAborted(() => {
      state.aborted = true;
      if (!state.finished) {
        state.finished = true;
        if (counted) recordAbortedRequest(slot, method, startedAt);
        if (trace) endRequestTrace(trace, 'aborted');
        finish();
      }
    });
    const headers: Record<string, string> = {};
    let repeated: Set<string> | undefined;
    raw.forEach((name, value) => {
      if (!(name in headers)) headers[name] = value;
      else {
        (repeated ??= new Set()).add(name);
        // Its lines are one list (RFC 9110 §5.3), in order: a proxy may add a line of its own.
        if (name === 'x-forwarded-for') headers[name] += `, ${value}`;
      }
    });
    // Once, when the request arrives (before the origin check, which reads the directory): any
    // commit its client could have seen answered was made before then, so the body's arrival later
    // needs no second look.
    let unprepared: unknown;
    /** This thread cannot serve the request now (see NeedsOwner): the main thread answers it, CORS included. */
    let handOverWhole = false;
    if (beforeRequest) {
      try {
        beforeRequest();
      } catch (error) {
        if (error instanceof NeedsOwner && handOver) handOverWhole = true;
        else unprepared = error;
      }
    }
    // The main thread's answer carries its own CORS headers.
    if (handOverWhole) state.cors = undefined;
    else state.origin = headers.origin;
    // Read now: the remote address is the connection's, which uWS may reuse once the request ends.
    const forwarded = slot === NOT_COUNTED;
    const peer = !route.peerAddress ? undefined : forwarded ? forwardedPeer : clientAddress(remoteAddress(res), headers['x-forwarded-for'], proxies);
    const params: string[] = [];
    for (let i = 0; i < paramCount; i++) params.push(decodeURIComponentSafe(raw.getParameter(i)));
    const path = raw.getUrl();
    const query = raw.getQuery() ?? '';
    // A caller's trace context is taken only from this process's own acceptor threads and from trusted
    // proxies: any client could otherwise have its requests sampled and exported under ids it chose.
    const parentTrusted = headers.traceparent !== undefined && (forwarded || (proxies?.has(remoteAddress(res)) ?? false));
    trace = startRequestTrace(method, route.pattern, path, parentTrusted ? headers : undefined);

    const respond = (response: Response) => {
      // Counted before the answer leaves: a client that scrapes right after its answer sees it.
      const first = !state.finished;
      if (first && counted) recordRequest(slot, method, response.status, startedAt);
      send(res, state, response);
      if (first) {
        state.finished = true;
        if (trace) endRequestTrace(trace, response.status);
        finish();
      }
    };
    // The locale is worked out only for an HTML error (no closure on the success path).
    let request: Request | undefined;
    const fail = (error: unknown) => {
      // On an acceptor thread: work only the main thread can do is handed over whole (nothing was changed yet).
      if (error instanceof NeedsOwner && handOver && request) {
        // The main thread's answer carries its own CORS headers.
        state.cors = undefined;
        handOver(route, request).then(respond, fail);
      } else respond(errorResponse(route.errorStyle, error, () => requestLocale(query, headers)));
    };

    if (unprepared !== undefined) {
      fail(unprepared);
      return;
    }
    if (draining) {
      fail(new ApiError('Unavailable', 'HTTP-503', 'server is shutting down'));
      return;
    }
    let handler: Handler | undefined = route.forward ?? (handOverWhole ? (req: Request) => handOver!(route, req) : undefined);
    if (!handler) {
      if (method === 'OPTIONS' && route.cors) handler = preflight(route);
      else handler = route.methods[method as Method] ?? (method === 'HEAD' ? route.methods.GET : undefined);
      if (!handler) {
        if (Object.keys(route.methods).length > 0) {
          const response = errorResponse(route.errorStyle, new ApiError('MethodNotAllowed', 'HTTP-405', `method ${method} not allowed`), () => requestLocale(query, headers));
          respond({ ...response, headers: { ...response.headers, Allow: Object.keys(route.methods).join(', ') } });
        } else {
          fail(new ApiError('NotFound', 'HTTP-404', 'Not Found'));
        }
        return;
      }
    }
    const handle = handler;

    const run = (body: Buffer) => {
      const req: Request = {
        method,
        path,
        query,
        params,
        headers,
        repeatedHeaders: repeated ?? NO_REPEATS,
        body,
        peer,
      };
      request = req;
      // In the request's span, the continuations included: the spans the handler starts are its
      // children. Without tracing, no closure for it.
      if (trace === undefined) dispatch(handle, req, respond, fail);
      else inRequestTrace(trace, () => dispatch(handle, req, respond, fail));
    };

    if (method === 'GET' || method === 'HEAD' || method === 'DELETE' || method === 'OPTIONS') {
      run(EMPTY);
      return;
    }
    // Also when the main thread will serve the request: the check spares the upload.
    // A check that reads the store answers later and the upload starts meanwhile. A refusal of a
    // large body answers at once, mid-upload (the connection then closes, as for a body too large),
    // so a refused caller uploads little; a small body is read first, so the client reads the
    // answer on a connection that stays usable.
    let checked: Promise<void> | undefined;
    if (route.beforeBody) {
      try {
        const outcome = route.beforeBody({ method, path, query, params, headers, repeatedHeaders: repeated ?? NO_REPEATS, body: EMPTY, peer });
        if (outcome instanceof Promise) checked = outcome;
      } catch (error) {
        fail(error);
        return;
      }
    }
    const maxBody = route.maxBody ?? DEFAULT_MAX_BODY;
    const declared = Number(headers['content-length'] ?? '0');
    if (declared > maxBody) {
      fail(bodyTooLarge(route));
      return;
    }
    let size = 0;
    // A refusal waits for the rest of a small body only: once more is declared or has arrived (a
    // chunked upload declares nothing), it is answered at once.
    let refusal: { error: unknown } | undefined;
    checked?.catch((error: unknown) => {
      refusal = { error };
      if (declared > ANSWER_EARLY_ABOVE || size > ANSWER_EARLY_ABOVE) fail(error);
    });
    // A large body with a declared length is copied into one buffer as it arrives, so it is never
    // held twice (chunks plus their concatenation). Behind a precheck still running, the buffer is
    // made only once the check passed (what arrived meanwhile is copied in): a caller it refuses
    // makes the server reserve nothing.
    const preallocate = () => Buffer.allocUnsafe(declared);
    let whole = declared >= PREALLOCATE_FROM && !checked ? preallocate() : undefined;
    const chunks: Buffer[] = [];
    if (checked && declared >= PREALLOCATE_FROM) {
      checked.then(
        () => {
          if (state.aborted) return;
          whole = preallocate();
          let at = 0;
          for (const chunk of chunks.splice(0)) {
            whole.set(chunk, at);
            at += chunk.length;
          }
        },
        () => undefined,
      );
    }
    res.onData((chunk, isLast) => {
      if (state.aborted) return;
      const offset = size;
      size += chunk.byteLength;
      if (size > maxBody || (whole && size > whole.length)) {
        fail(bodyTooLarge(route));
        return;
      }
      if (refusal && size > ANSWER_EARLY_ABOVE) {
        fail(refusal.error);
        return;
      }
      // uWS reuses the chunk's memory after this callback returns: copy it.
      if (whole) whole.set(new Uint8Array(chunk), offset);
      else chunks.push(Buffer.from(chunk.slice(0)));
      if (!isLast) return;
      const body = whole ? (size === whole.length ? whole : whole.subarray(0, size)) : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      if (checked) checked.then(() => run(body), fail);
      else run(body);
    });
  };

  return new Promise((resolve, reject) => {
    // uWS shares ports by default (SO_REUSEPORT): a second server on the same port would start
    // and take half the connections. Listen exclusively so it fails instead. The typings lack
    // this overload, which the binary has.
    const listen = app.listen as unknown as (host: string, port: number, options: number, cb: (socket: uWS.us_listen_socket | false) => void) => void;
    listen.call(app, host, port, options.sharedPort ? 0 : LISTEN_EXCLUSIVE_PORT, (listenSocket) => {
      if (!listenSocket) {
        // uWS does not say why; a plain bind of the same address does.
        void listenFailure(host, port).then((code) => reject(new ListenError(host, port, code)));
        return;
      }
      resolve({
        port: uWS.us_socket_local_port(listenSocket as unknown as uWS.us_socket),
        mount(routes) {
          // uWS would quietly let one of two routes on the same pattern win: one route per path, with all its methods.
          const patterns = new Set<string>();
          for (const route of routes) {
            if (patterns.has(route.pattern)) throw new Error(`two routes for ${route.pattern}`);
            patterns.add(route.pattern);
          }
          for (const route of routes) {
            const slot = mounted.push(route) - 1;
            const paramCount = paramCountOf(route.pattern);
            app.any(route.pattern, (res, req) => serve(route, res, req, paramCount, slot));
          }
          // Unknown paths: 404 in the style of the surface the path belongs to, counted after the routes.
          const unmatched = mounted.length;
          app.any('/*', (res, req) => serve(fallbacks[surfaceOf(req.getUrl())], res, req, 0, unmatched));
        },
        // In the binary, missing from the typings.
        close: () => (app as unknown as { close(): void }).close(),
        routeTable: () => describeRoutes(mounted),
        serveForwarded(request) {
          const route = typeof request.route === 'number' ? mounted[request.route] : fallbacks[request.route];
          if (!route) return Promise.reject(new Error(`no route ${String(request.route)}`));
          return new Promise((resolve) => {
            const { res, onData } = forwardedResponse(resolve);
            serve(route, res, forwardedRequest(request), request.params.length, NOT_COUNTED, request.peer);
            // The whole body at once, as uWS hands over a body that arrived in one piece (serve() copies it).
            const body = request.body;
            const whole = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
            onData()?.((whole ? body.buffer : body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength)) as ArrayBuffer, true);
          });
        },
        requestsServed: () => served,
        drain(timeoutMs: number) {
          draining = true;
          uWS.us_listen_socket_close(listenSocket);
          if (inFlight === 0) return Promise.resolve();
          return new Promise<void>((done) => {
            const timer = setTimeout(() => {
              log.warn('shutdown: requests still in flight after timeout', { inFlight });
              done();
            }, timeoutMs);
            onIdle = () => {
              clearTimeout(timer);
              done();
            };
          });
        },
      });
    });
  });
}

/** Runs a handler, its answer or failure going to `respond` or `fail`. */
function dispatch(handle: Handler, req: Request, respond: (response: Response) => void, fail: (error: unknown) => void): void {
  try {
    const result = handle(req);
    if (result instanceof Promise) result.then(respond, fail);
    else respond(result);
  } catch (error) {
    fail(error);
  }
}

/** The connection's remote address (uWS may reuse the connection's memory once the request ends: read it during the request). */
function remoteAddress(res: uWS.HttpResponse): string {
  return Buffer.from(res.getRemoteAddressAsText()).toString();
}

const LINE_BREAK = /[\r\n]/;

/** A header value as written: never with a line break, which would split the response. */
function headerValue(value: string): string {
  return LINE_BREAK.test(value) ? value.replace(/[\r\n]+/g, ' ') : value;
}

/** The surface an unknown path belongs to, whose style its 404 takes. */
export function surfaceOf(url: string): ErrorStyle {
  return url.startsWith('/oauth/') || url.startsWith('/oidc/') || url.startsWith('/.well-known/') ? 'oauth' : url.startsWith('/ui/') ? 'html' : 'api';
}

export function paramCountOf(pattern: string): number {
  return (pattern.match(/\/:/g) ?? []).length;
}

/** The uWS request calls serve() makes, answered from a forwarded request. */
function forwardedRequest(request: ForwardedRequest): uWS.HttpRequest {
  const fake = {
    getCaseSensitiveMethod: () => request.method,
    getUrl: () => request.path,
    getQuery: () => request.query,
    // serve() decodes parameters; these were decoded on the acceptor thread already.
    getParameter: (i: number) => encodeURIComponentSafe(request.params[i] ?? ''),
    forEach(each: (name: string, value: string) => void) {
      for (const name in request.headers) each(name, request.headers[name]!);
      for (const name of request.repeatedHeaders) each(name, '');
    },
  };
  return fake as unknown as uWS.HttpRequest;
}

/** The uWS response calls serve() makes, collected into what goes back to the acceptor thread. */
function forwardedResponse(resolve: (response: ForwardedResponse) => void): { res: uWS.HttpResponse; onData: () => ((chunk: ArrayBuffer, isLast: boolean) => void) | undefined } {
  let status = 200;
  const headers: [string, string][] = [];
  let dataHandler: ((chunk: ArrayBuffer, isLast: boolean) => void) | undefined;
  const fake = {
    onAborted: () => fake,
    onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void) {
      dataHandler = handler;
      return fake;
    },
    cork(work: () => void) {
      work();
      return fake;
    },
    writeStatus(line: string) {
      status = Number.parseInt(line, 10);
      return fake;
    },
    writeHeader(name: string, value: string) {
      headers.push([name, value]);
      return fake;
    },
    end(body: string | Buffer) {
      resolve({ status, headers, body });
      return fake;
    },
  };
  return { res: fake as unknown as uWS.HttpResponse, onData: () => dataHandler };
}

function encodeURIComponentSafe(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return value;
  }
}

export class ListenError extends Error {
  constructor(
    readonly host: string,
    readonly port: number,
    /** errno code such as EADDRINUSE, EACCES or EADDRNOTAVAIL, when known. */
    readonly code: string | undefined,
  ) {
    super(`cannot listen on ${host}:${port}${code ? ` (${code})` : ''}`);
  }
}

/** A port the OS considers free on `host` now. */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ host, port: 0, exclusive: true }, () => {
      const address = probe.address();
      probe.close(() => (address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port chosen'))));
    });
  });
}

function listenFailure(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}

/** A CORS preflight's answer; its allowed origin, read from the copies, waits for them to be current (Route.current). */
function preflight(route: Route): Handler {
  const response: Response = {
    status: 204,
    headers: {
      'Access-Control-Allow-Methods': [...Object.keys(route.methods), 'OPTIONS'].join(', '),
      // DPoP: browser clients send proofs (RFC 9449 §4.1).
      'Access-Control-Allow-Headers': 'Authorization, Content-Type, DPoP',
      'Access-Control-Max-Age': '86400',
    },
  };
  return () => route.current?.()?.then(() => response) ?? response;
}

interface RequestState {
  /** The route's CORS rule, applied as the answer leaves (none for an answer the main thread made). */
  cors: Route['cors'];
  /** The request's Origin header. */
  origin: string | undefined;
  /** The connection was aborted or the response already written. */
  aborted: boolean;
  /** The request has left the in-flight count. */
  finished: boolean;
}

const NO_REPEATS: ReadonlySet<string> = new Set();

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
