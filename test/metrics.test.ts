import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { ON_POSTGRES } from './helpers/postgres.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format';
import { api, basicAuth, createApiApp, createMachineClient } from './helpers/api.js';
import { connectionsOnEveryThread, type Connection } from './helpers/connection.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';
import { Agent, createHuman, createWebApp, exchangeCode, submit, type Human, type WebApp } from './helpers/oidc.js';

/**
 * GET /metrics (SESAME_METRICS_PORT) against a real server on every HTTP thread it runs
 * (SESAME_HTTP_THREADS: two by default here, one in CI's second run): requests spread over many
 * kept-alive connections, so over the threads, and every counter must move by exactly what was
 * sent, whichever thread served or forwarded it. The scrape is parsed by a Prometheus text format
 * parser (parse-prometheus-text-format). SESAME_SIGNER=pool sends every JWT signature through the
 * main thread's worker pool, so its batches are known exactly too.
 */
const TOKEN = 'metrics-scraper-token-0123456789';
const CONNECTIONS = 16;
const REDIRECT = 'http://localhost:9999/callback';

let server: InProcessServer;
let connections: Connection[];
let introspector: string;
let audience: string;
let opaqueClient: { clientId: string; clientSecret: string };
let jwtClient: { clientId: string; clientSecret: string };
let web: WebApp;

beforeAll(async () => {
  server = await startInProcess({ env: { SESAME_METRICS_PORT: '0', SESAME_METRICS_TOKEN: TOKEN, SESAME_SIGNING_ALG: 'ES256', SESAME_SIGNER: 'pool' } });
  const resource = await createApiApp(server, 'metrics');
  introspector = basicAuth(resource.clientId, resource.clientSecret);
  audience = `urn:zitadel:iam:org:project:id:${resource.projectId}:aud`;
  opaqueClient = await createMachineClient(server, 'metrics-opaque');
  jwtClient = await createMachineClient(server, 'metrics-jwt', 'ACCESS_TOKEN_TYPE_JWT');
  web = await createWebApp(server);
  connections = await connectionsOnEveryThread(server.port, () => server.app.requestsPerThread(), CONNECTIONS / server.app.ctx.config.httpThreads);
});

afterAll(async () => {
  for (const c of connections ?? []) c.close();
  await server?.close();
});

const metricsUrl = () => `http://127.0.0.1:${server.app.metricsPort}/metrics`;
const onEvery = <T>(work: (c: Connection) => Promise<T>) => Promise.all(connections.map(work));
const issue = (c: Connection, client: { clientId: string; clientSecret: string }) =>
  c.post('/oauth/v2/token', basicAuth(client.clientId, client.clientSecret), { grant_type: 'client_credentials', scope: audience });

/** One scrape: the parsed families, and the text for what the parser does not keep (see histogramCount). */
class Scrape {
  constructor(
    readonly text: string,
    readonly families: ParsedFamily[],
  ) {}

  family(name: string): ParsedFamily {
    const family = this.families.find((f) => f.name === name);
    if (!family) throw new Error(`no metric ${name} in the scrape`);
    return family;
  }

  /** The sum of a counter's or gauge's samples whose labels include `labels` (0 if none: not counted yet). */
  value(name: string, labels: Record<string, string> = {}): number {
    return this.family(name)
      .metrics.filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
      .reduce((sum, m) => sum + Number(m.value), 0);
  }

  /**
   * A histogram's count for exactly these labels. parse-prometheus-text-format folds the series of a
   * labeled histogram into one (it keeps buckets of one label set, drops _count and _sum), so
   * the `_count` sample is read from its line; the parser has checked the whole text before.
   */
  histogramCount(name: string, labels: Record<string, string> = {}): number {
    return this.histogramSample(`${name}_count`, labels);
  }

  histogramSum(name: string, labels: Record<string, string> = {}): number {
    return this.histogramSample(`${name}_sum`, labels);
  }

  private histogramSample(sample: string, labels: Record<string, string>): number {
    expect(this.family(sample.replace(/_(count|sum)$/, '')).type).toBe('HISTOGRAM');
    for (const line of this.text.split('\n')) {
      const match = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match || match[1] !== sample) continue;
      const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
      if (Object.keys(found).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
    }
    return 0;
  }
}

async function scrape(): Promise<Scrape> {
  const res = await fetch(metricsUrl(), { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  return new Scrape(text, parsePrometheusTextFormat(text));
}

/** How much `read` grew between two scrapes. */
const grew = (before: Scrape, after: Scrape, read: (s: Scrape) => number) => read(after) - read(before);

describe('the metrics listener', () => {
  it('serves GET /metrics on its own port only, to a scraper with the token', async () => {
    expect(server.app.metricsPort).toBeGreaterThan(0);
    expect(server.app.metricsPort).not.toBe(server.port);
    const none = await fetch(metricsUrl());
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await fetch(metricsUrl(), { headers: { authorization: `Bearer ${TOKEN}x` } })).status).toBe(401);
    expect((await fetch(metricsUrl(), { headers: { authorization: TOKEN } })).status).toBe(401);
    expect((await fetch(metricsUrl(), { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(405);
    expect((await fetch(metricsUrl().replace('/metrics', '/'), { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
    // Not on the public port, whatever the token.
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
  });

  it('refuses to start on a metrics port in use, naming the setting', async () => {
    const holder = createServer();
    await new Promise<void>((done) => holder.listen(0, '127.0.0.1', done));
    const taken = (holder.address() as AddressInfo).port;
    try {
      await expect(startInProcess({ env: { SESAME_METRICS_PORT: String(taken) } })).rejects.toThrow(/SESAME_METRICS_PORT \(--metrics-port\) = \d+: port \d+ on 127\.0\.0\.1 is already in use/);
    } finally {
      holder.close();
    }
  });

  it('answers with Prometheus text: every family with help and its type, every HTTP thread in the loop lag', async () => {
    const scraped = await scrape();
    const types = Object.fromEntries(scraped.families.map((f) => [f.name, f.type]));
    expect(types).toMatchObject({
      sesame_http_requests_total: 'COUNTER',
      sesame_http_request_duration_seconds: 'HISTOGRAM',
      sesame_tokens_issued_total: 'COUNTER',
      sesame_introspections_total: 'COUNTER',
      sesame_sign_ins_total: 'COUNTER',
      sesame_sign_in_failures_total: 'COUNTER',
      sesame_lockouts_total: 'COUNTER',
      sesame_lmdb_commit_duration_seconds: 'HISTOGRAM',
      sesame_lmdb_map_size_bytes: 'GAUGE',
      sesame_lmdb_used_bytes: 'GAUGE',
      sesame_lmdb_readers: 'GAUGE',
      sesame_worker_pool_queue_length: 'GAUGE',
      sesame_worker_batch_size: 'HISTOGRAM',
      sesame_worker_batch_pending: 'GAUGE',
      sesame_event_loop_lag_seconds: 'GAUGE',
      sesame_thread_heap_bytes: 'GAUGE',
      sesame_worker_threads: 'GAUGE',
      // prom-client's process metrics
      process_cpu_seconds_total: 'COUNTER',
      process_resident_memory_bytes: 'GAUGE',
      nodejs_eventloop_lag_seconds: 'GAUGE',
    });
    for (const family of scraped.families) expect(family.help, family.name).not.toBe('');
    const threads = server.app.ctx.config.httpThreads;
    const lagThreads = new Set(scraped.family('sesame_event_loop_lag_seconds').metrics.map((m) => m.labels?.thread));
    expect([...lagThreads].sort()).toEqual(Array.from({ length: threads }, (_, i) => String(i)));
    // Every HTTP thread publishes its own heap (at start, then each second): live bytes within the heap's size.
    const heaps = scraped.family('sesame_thread_heap_bytes').metrics;
    for (let thread = 0; thread < threads; thread++) {
      const figure = (stat: string) => Number(heaps.find((m) => m.labels?.thread === String(thread) && m.labels?.stat === stat)?.value);
      expect(figure('used'), `thread ${thread}`).toBeGreaterThan(1024 ** 2);
      expect(figure('total'), `thread ${thread}`).toBeGreaterThanOrEqual(figure('used'));
    }
    if (ON_POSTGRES) {
      // The store's own figures: PostgreSQL's statements and connections (LMDB's file has none here).
      expect(scraped.histogramCount('sesame_postgres_statement_duration_seconds')).toBeGreaterThan(0);
      expect(scraped.value('sesame_postgres_pool_connections', { state: 'total' })).toBeGreaterThan(0);
    } else {
      expect(scraped.value('sesame_lmdb_map_size_bytes')).toBe(64 * 1024 ** 3);
      expect(scraped.value('sesame_lmdb_used_bytes')).toBeGreaterThan(0);
      // Start-up's writes (the instance, the admin, the keys) were committed and counted.
      expect(scraped.histogramCount('sesame_lmdb_commit_duration_seconds')).toBeGreaterThan(0);
    }
  });
});

describe('counts', () => {
  it('every request once, on whichever HTTP thread it arrived, by route pattern, method and status', async () => {
    const before = await scrape();
    const servedBefore = await server.app.requestsPerThread();
    await onEvery(async (c) => {
      const issued = await issue(c, opaqueClient);
      expect(issued.status).toBe(200);
      expect((await c.post('/oauth/v2/introspect', introspector, { token: issued.body.access_token })).body.active).toBe(true);
      expect((await c.post('/oauth/v2/introspect', introspector, { token: 'no-such-token' })).body.active).toBe(false);
      // Health is the main thread's: an acceptor forwards it, and it counts once, where it arrived.
      expect((await c.get('/healthz')).status).toBe(200);
      expect((await c.get(`/no/such/path/${Math.random()}`)).status).toBe(404);
      expect((await c.post('/oauth/v2/token', undefined, { grant_type: 'client_credentials' })).status).toBe(401);
    });
    const after = await scrape();
    const requests = (route: string, method: string, status: string) => grew(before, after, (s) => s.value('sesame_http_requests_total', { route, method, status }));
    expect(requests('/oauth/v2/token', 'POST', '200')).toBe(CONNECTIONS);
    expect(requests('/oauth/v2/token', 'POST', '401')).toBe(CONNECTIONS);
    expect(requests('/oauth/v2/introspect', 'POST', '200')).toBe(2 * CONNECTIONS);
    expect(requests('/healthz', 'GET', '200')).toBe(CONNECTIONS);
    expect(requests('unmatched', 'GET', '404')).toBe(CONNECTIONS);
    expect(grew(before, after, (s) => s.value('sesame_http_requests_total'))).toBe(6 * CONNECTIONS);
    expect(grew(before, after, (s) => s.histogramCount('sesame_http_request_duration_seconds', { route: '/oauth/v2/token', method: 'POST' }))).toBe(2 * CONNECTIONS);
    expect(grew(before, after, (s) => s.histogramSum('sesame_http_request_duration_seconds', { route: '/healthz', method: 'GET' }))).toBeGreaterThan(0);
    expect(grew(before, after, (s) => s.value('sesame_tokens_issued_total', { grant: 'client_credentials', type: 'opaque_access_token' }))).toBe(CONNECTIONS);
    expect(grew(before, after, (s) => s.value('sesame_tokens_issued_total'))).toBe(CONNECTIONS);
    expect(grew(before, after, (s) => s.value('sesame_introspections_total', { result: 'active' }))).toBe(CONNECTIONS);
    expect(grew(before, after, (s) => s.value('sesame_introspections_total', { result: 'inactive' }))).toBe(CONNECTIONS);
    // Each opaque token was committed before it was handed out (in batches: at least one commit; on PostgreSQL a statement each).
    const committed = ON_POSTGRES ? 'sesame_postgres_statement_duration_seconds' : 'sesame_lmdb_commit_duration_seconds';
    expect(grew(before, after, (s) => s.histogramCount(committed))).toBeGreaterThan(0);
    // Every thread took part, so each counted some of the requests above.
    const servedAfter = await server.app.requestsPerThread();
    for (const [thread, count] of servedAfter.entries()) expect(count - servedBefore[thread]!, `thread ${thread}`).toBeGreaterThan(0);
  });

  it('JWTs signed in the worker pool, in batches', async () => {
    const before = await scrape();
    await onEvery(async (c) => expect((await issue(c, jwtClient)).status).toBe(200));
    const after = await scrape();
    expect(grew(before, after, (s) => s.value('sesame_tokens_issued_total', { grant: 'client_credentials', type: 'jwt_access_token' }))).toBe(CONNECTIONS);
    // SESAME_SIGNER=pool: every signature went through a batch (one item or more each).
    expect(grew(before, after, (s) => s.histogramSum('sesame_worker_batch_size', { kind: 'sign' }))).toBe(CONNECTIONS);
    const batches = grew(before, after, (s) => s.histogramCount('sesame_worker_batch_size', { kind: 'sign' }));
    expect(batches).toBeGreaterThanOrEqual(1);
    expect(batches).toBeLessThanOrEqual(CONNECTIONS);
    expect(after.value('sesame_worker_batch_pending', { kind: 'sign' })).toBe(0);
    expect(after.value('sesame_worker_pool_queue_length')).toBe(0);
  });

  it('sign-ins, their failures and lockouts, and the tokens of the code flow', async () => {
    const lockout = await api(server, 'POST', '/management/v1/policies/lockout', { token: server.pat, body: { maxPasswordAttempts: '2' } });
    expect(lockout.status, JSON.stringify(lockout.body)).toBe(200);
    const authorize = `/oauth/v2/authorize?${new URLSearchParams({ client_id: web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid offline_access' })}`;
    const toPassword = async (agent: Agent, person: Human) => submit(agent, await agent.follow(authorize), '/ui/login/loginname', { loginName: person.loginName });
    const ada = await createHuman(server);
    const bob = await createHuman(server);
    const before = await scrape();

    const adaAgent = new Agent(server);
    let page = await toPassword(adaAgent, ada);
    page = await submit(adaAgent, page, '/ui/login/password', { password: 'wrong' });
    page = await submit(adaAgent, page, '/ui/login/password', { password: ada.password });
    expect(page.location).toContain('code=');
    const tokens = await exchangeCode(server, web, page.location!);
    expect(tokens.status).toBe(200);
    expect(tokens.refresh_token).toBeDefined();

    const bobAgent = new Agent(server);
    page = await toPassword(bobAgent, bob);
    page = await submit(bobAgent, page, '/ui/login/password', { password: 'wrong-1' });
    page = await submit(bobAgent, page, '/ui/login/password', { password: 'wrong-2' });
    page = await submit(bobAgent, page, '/ui/login/password', { password: bob.password });
    expect(page.location).toBeUndefined();

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => grew(before, after, (s) => s.value(name, labels));
    expect(delta('sesame_sign_ins_total')).toBe(1);
    expect(delta('sesame_sign_in_failures_total', { reason: 'password' })).toBe(3);
    expect(delta('sesame_sign_in_failures_total', { reason: 'locked' })).toBe(1);
    expect(delta('sesame_sign_in_failures_total', { reason: 'otp' })).toBe(0);
    expect(delta('sesame_lockouts_total', { factor: 'password' })).toBe(1);
    expect(delta('sesame_tokens_issued_total', { grant: 'authorization_code', type: 'opaque_access_token' })).toBe(1);
    expect(delta('sesame_tokens_issued_total', { grant: 'authorization_code', type: 'id_token' })).toBe(1);
    expect(delta('sesame_tokens_issued_total', { grant: 'authorization_code', type: 'refresh_token' })).toBe(1);
    expect(delta('sesame_tokens_issued_total')).toBe(3);
    expect(delta('sesame_http_requests_total', { route: '/ui/login/password', method: 'POST' })).toBe(5);
  });
});
