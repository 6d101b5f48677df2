import type { Alg, BenchOptions } from '../args.js';
import type { ScenarioResult } from '../table.js';
import { basicAuth, type Client, type PreparedTarget } from '../targets/target.js';

/**
 * A bench scenario is one small module: the algorithm its target must sign with, and the
 * requests autocannon sends (prepared against a running target, e.g. with pre-issued tokens).
 */
export interface BenchRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** `context` is the connection's (autocannon keeps one per connection). */
  setupRequest?: (request: { body?: string; headers?: Record<string, string> }, context?: Record<string, unknown>) => { body?: string; headers?: Record<string, string> };
  /** Reads a response into the connection's context (e.g. a code or a rotated refresh token). */
  onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string>) => void;
}

export interface RequestPlan {
  requests: BenchRequest[];
  /** Send exactly this many requests instead of running for the duration (e.g. one per prepared token). */
  amount?: number;
}

export interface Skip {
  skip: string;
}

/** Most scenarios: requests that autocannon sends for the run's duration. */
export interface RequestScenario {
  name: string;
  alg: Alg;
  plan(target: PreparedTarget, options: Pick<BenchOptions, 'duration'>): Promise<RequestPlan | Skip>;
}

/**
 * A scenario that does not fit the request model (e.g. one large export and import): it runs
 * itself against the target and returns its own result rows.
 */
export interface CustomScenario {
  name: string;
  alg: Alg;
  run(target: PreparedTarget): Promise<ScenarioResult[] | Skip>;
}

export type Scenario = RequestScenario | CustomScenario;

export const FORM = 'application/x-www-form-urlencoded';

export function pathOf(url: string): string {
  const u = new URL(url);
  return u.pathname + u.search;
}

export function get(url: string): RequestPlan {
  return { requests: [{ method: 'GET', path: pathOf(url) }] };
}

export function postForm(url: string, client: Client, body: string): RequestPlan {
  return { requests: [{ method: 'POST', path: pathOf(url), headers: { 'content-type': FORM, authorization: basicAuth(client) }, body }] };
}

/** POSTs `token=<t>` cycling through a pool of tokens, one per request. */
export function cyclingTokenPost(url: string, client: Client, tokens: readonly string[]): RequestPlan {
  let next = 0;
  const bodies = tokens.map((t) => `token=${encodeURIComponent(t)}`);
  return {
    requests: [
      {
        method: 'POST',
        path: pathOf(url),
        headers: { 'content-type': FORM, authorization: basicAuth(client) },
        setupRequest: (request) => {
          request.body = bodies[next++ % bodies.length];
          return request;
        },
      },
    ],
  };
}
