import { NeedsOwner } from '../../model/errors.js';
import { errorResponse } from '../errors.js';
import type { Method, Request, Response, Route } from '../types.js';

/**
 * How the console acts: through the very routes the management, admin and auth APIs serve, called
 * in this thread with the signed-in person's access token, so every check (authentication, the
 * token's power, permissions, validation) is the API's own and the activity log names the person.
 * No second code path decides what the console may do.
 */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** ZITADEL's error id (`details[0].id`), when the answer has one: what a page may answer differently. */
    readonly id?: string,
  ) {
    super(message);
  }
}

export interface ApiCaller {
  /** Calls the API route `pattern` (its `:params` filled in order) and answers its JSON body; a non-2xx answer throws ApiProblem. */
  call<T = Record<string, unknown>>(method: Method, pattern: string, params?: readonly string[], body?: unknown): Promise<T>;
  /** The same with a body already encoded (an import's bundle, as uploaded), answering the route's response as it is (an export's bundle). */
  send(method: Method, pattern: string, params: readonly string[], body: Buffer): Promise<Response>;
}

const NO_REPEATS: ReadonlySet<string> = new Set();

/** The API's message without ZITADEL's error id suffix. */
function problemOf(response: Response): ApiProblem {
  let message = `HTTP ${response.status}`;
  try {
    const parsed = JSON.parse(String(response.body ?? '')) as { message?: unknown; error_description?: unknown; details?: { id?: unknown }[] };
    if (typeof parsed.message === 'string') message = parsed.message;
    else if (typeof parsed.error_description === 'string') message = parsed.error_description;
    const id = Array.isArray(parsed.details) ? parsed.details[0]?.id : undefined;
    if (typeof id === 'string') return new ApiProblem(response.status, message, id);
  } catch {
    // not JSON: the status says enough
  }
  return new ApiProblem(response.status, message);
}

export class InProcessApi {
  private readonly byPattern: Map<string, Route>;

  constructor(routes: readonly Route[]) {
    this.byPattern = new Map(routes.map((route) => [route.pattern, route]));
  }

  /** Answers a request to `pattern` as the server would (its errors mapped as the route's style maps them). */
  async answer(method: Method, pattern: string, params: readonly string[], headers: Record<string, string>, body: Buffer, peer: string | undefined): Promise<Response> {
    const route = this.byPattern.get(pattern);
    const handler = route?.methods[method];
    if (!route || !handler) throw new Error(`the console calls ${method} ${pattern}, which no API route serves`);
    let i = 0;
    const path = pattern.replace(/:[A-Za-z]+/g, () => encodeURIComponent(params[i++] ?? ''));
    const req: Request = { method, path, query: '', params, headers, repeatedHeaders: NO_REPEATS, body, peer };
    try {
      return await handler(req);
    } catch (error) {
      // Work only the main thread does: the console's whole request is handed to it (server.ts).
      if (error instanceof NeedsOwner) throw error;
      return errorResponse(route.errorStyle, error);
    }
  }

  /** The API as the holder of `accessToken`, in org `orgId`, from the browser at `peer`. */
  as(accessToken: string, orgId: string, peer: string | undefined): ApiCaller {
    const send = async (method: Method, pattern: string, params: readonly string[], body: Buffer, json: boolean): Promise<Response> => {
      const headers: Record<string, string> = { authorization: `Bearer ${accessToken}`, 'x-zitadel-orgid': orgId };
      if (json) headers['content-type'] = 'application/json';
      const response = await this.answer(method, pattern, params, headers, body, peer);
      if (response.status < 200 || response.status > 299) throw problemOf(response);
      return response;
    };
    return {
      call: async <T>(method: Method, pattern: string, params: readonly string[] = [], body?: unknown): Promise<T> => {
        const response = await send(method, pattern, params, Buffer.from(body === undefined ? '' : JSON.stringify(body)), body !== undefined);
        const text = String(response.body ?? '');
        return (text ? JSON.parse(text) : {}) as T;
      },
      send: (method, pattern, params, body) => send(method, pattern, params, body, true),
    };
  }
}
