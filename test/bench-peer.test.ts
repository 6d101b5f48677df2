import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeFlow as codeFlowScenario, refresh as refreshScenario } from '../bench/scenarios/browser-flows.js';
import type { RequestPlan, RequestScenario } from '../bench/scenarios/scenario.js';
import { startPeer, type Peer } from '../bench/targets/oidc-provider-server.js';
import { signIn } from '../bench/targets/oidc-provider.js';
import { discoverEndpoints, type PreparedTarget } from '../bench/targets/target.js';

/**
 * The bench's oidc-provider peer (started in-process here; the bench runs the same code as a
 * child process) serves the browser-flow scenarios: the one-time sign-in through its dev login
 * form leaves a session cookie with which `prompt=none` answers with a code, the code redeems
 * with the PKCE verifier, and when the request asked for offline_access the token response carries
 * a refresh token that rotates.
 */
const codeFlow = codeFlowScenario as RequestScenario;
const refresh = refreshScenario as RequestScenario;
let peer: Peer;
let target: PreparedTarget;

beforeAll(async () => {
  peer = await startPeer();
  const endpoints = await discoverEndpoints(peer.issuer);
  target = {
    name: 'oidc-provider',
    issuer: peer.issuer,
    endpoints,
    ccOpaque: undefined,
    ccJwt: undefined,
    introspector: undefined,
    signIn: await signIn(endpoints.authorization!, peer.webClient, peer.redirectUri),
    notes: [],
  };
});

afterAll(async () => {
  await peer?.close();
});

/** Sends a plan's requests once, in order, as autocannon would on one connection. */
async function iterate(plan: RequestPlan, bodies: string[] = [], sent: string[] = []): Promise<number[]> {
  const context: Record<string, unknown> = {};
  const statuses: number[] = [];
  for (const step of plan.requests) {
    const { body } = step.setupRequest ? step.setupRequest({ body: step.body }, context) : step;
    sent.push(String(body ?? ''));
    const res = await fetch(new URL(step.path, target.issuer), { method: step.method, headers: step.headers, body, redirect: 'manual' });
    const text = await res.text();
    step.onResponse?.(res.status, text, context, Object.fromEntries(res.headers));
    statuses.push(res.status);
    bodies.push(text);
  }
  return statuses;
}

describe('bench oidc-provider peer', () => {
  it('signs a person in once; code-flow then redeems a silent code', async () => {
    expect(target.signIn!.cookie).toMatch(/^_session=/);
    const plan = (await codeFlow.plan(target, { duration: 1 })) as RequestPlan;
    expect(plan.requests).toHaveLength(2);
    const bodies: string[] = [];
    const [authorize, token] = await iterate(plan, bodies);
    expect(authorize).toBe(303);
    expect(token).toBe(200);
    // Scope `openid` only: an ID token, and (as on Sesame) no refresh token.
    const tokens = JSON.parse(bodies[1]!) as Record<string, unknown>;
    expect(tokens.id_token).toBeTruthy();
    expect(tokens.refresh_token).toBeUndefined();
  });

  it('refresh rotates the token families it prepared', async () => {
    const plan = (await refresh.plan(target, { duration: 1 })) as RequestPlan;
    const bodies: string[] = [];
    const sent: string[] = [];
    expect(await iterate(plan, bodies, sent)).toEqual([200]);
    expect(await iterate(plan)).toEqual([200]);
    // A new token came back, and the one it replaces is refused now.
    const used = new URLSearchParams(sent[0]).get('refresh_token')!;
    const successor = (JSON.parse(bodies[0]!) as { refresh_token: string }).refresh_token;
    expect(successor).toBeTruthy();
    expect(successor).not.toBe(used);
    const step = plan.requests[0]!;
    const reused = await fetch(new URL(step.path, target.issuer), { method: 'POST', headers: step.headers, body: `grant_type=refresh_token&refresh_token=${encodeURIComponent(used)}` });
    expect(reused.status).toBe(400);
    expect(((await reused.json()) as { error: string }).error).toBe('invalid_grant');
  });
});
