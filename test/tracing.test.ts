import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { propagation } from '@opentelemetry/api';
import { ON_POSTGRES } from './helpers/postgres.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth, createApiApp, createMachineClient } from './helpers/api.js';
import { connectionsOnEveryThread } from './helpers/connection.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';

/**
 * OpenTelemetry tracing: a server started with OTEL_EXPORTER_OTLP_ENDPOINT exports its spans over
 * OTLP/HTTP to a receiver in this test (a real HTTP server). Every HTTP thread exports its own;
 * stopping the server sends what is left, so the test reads the spans without waiting on a timer.
 */
const CONNECTIONS = 16;

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  traceState?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: OtlpValue }[];
  /** The HTTP thread that exported it (its resource's sesame.http_thread). */
  thread: number;
}

/** Collects what OTLP exporters POST to /v1/traces. */
class OtlpReceiver {
  readonly posts: { path: string; contentType: string; body: Buffer }[] = [];
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.posts.push({ path: req.url ?? '', contentType: req.headers['content-type'] ?? '', body: Buffer.concat(chunks) });
        // An empty ExportTraceServiceResponse: everything accepted.
        res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/json' });
        res.end(req.headers['content-type'] === 'application/json' ? '{}' : '');
      });
    });
    await new Promise<void>((done) => this.server!.listen(0, '127.0.0.1', done));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The spans of the OTLP/JSON posts. */
  spans(): OtlpSpan[] {
    return this.posts.flatMap((post) => {
      const request = JSON.parse(post.body.toString()) as {
        resourceSpans: { resource: { attributes: { key: string; value: OtlpValue }[] }; scopeSpans: { spans: Omit<OtlpSpan, 'thread'>[] }[] }[];
      };
      return request.resourceSpans.flatMap((resource) => {
        const thread = Number(resource.resource.attributes.find((a) => a.key === 'sesame.http_thread')?.value.intValue);
        return resource.scopeSpans.flatMap((scope) => scope.spans.map((span) => ({ ...span, thread })));
      });
    });
  }

  close(): Promise<void> {
    return new Promise((done) => this.server?.close(() => done()) ?? done());
  }
}

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue !== undefined ? Number(value.intValue) : value?.boolValue);
};

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
/** A client's own trace context: a parent, vendor trace state and baggage. */
const CLIENT_CONTEXT = { traceparent: `00-${CLIENT_TRACE}-00f067aa0ba902b7-01`, tracestate: 'client=chosen', baggage: 'user.id=chosen' };

describe('tracing over OTLP/HTTP (JSON)', () => {
  const receiver = new OtlpReceiver();
  let server: InProcessServer;
  let spans: OtlpSpan[];
  let threads: number;
  /** The headers the main thread extracted a trace context from (those of requests handed over to it). */
  const handedOver: Record<string, string>[] = [];

  beforeAll(async () => {
    const endpoint = await receiver.start();
    // SESAME_SIGNER=pool: every JWT is signed in the main thread's pool (an acceptor thread forwards it).
    server = await startInProcess({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', SESAME_SIGNER: 'pool', SESAME_SIGNING_ALG: 'ES256' } });
    threads = server.app.ctx.config.httpThreads;
    const resource = await createApiApp(server, 'traced');
    const scope = `urn:zitadel:iam:org:project:id:${resource.projectId}:aud`;
    const opaque = await createMachineClient(server, 'traced-opaque');
    const jwt = await createMachineClient(server, 'traced-jwt', 'ACCESS_TOKEN_TYPE_JWT');
    const connections = await connectionsOnEveryThread(server.port, () => server.app.requestsPerThread(), CONNECTIONS / threads);
    await Promise.all(
      connections.map(async (c) => {
        expect((await c.post('/oauth/v2/token', basicAuth(opaque.clientId, opaque.clientSecret), { grant_type: 'client_credentials', scope })).status).toBe(200);
        expect((await c.post('/oauth/v2/token', basicAuth(jwt.clientId, jwt.clientSecret), { grant_type: 'client_credentials', scope })).status).toBe(200);
        expect((await c.get('/healthz')).status).toBe(200);
      }),
    );
    // A client naming a trace of its own, with trace state and baggage, on requests an acceptor thread
    // hands to the main thread: what the main thread continues from is the acceptor's context alone.
    const original = propagation.extract.bind(propagation);
    propagation.extract = (context, carrier, getter) => {
      handedOver.push({ ...(carrier as Record<string, string>) });
      return original(context, carrier, getter);
    };
    try {
      await Promise.all(connections.map(async (c) => expect((await c.get('/readyz', CLIENT_CONTEXT)).status).toBe(200)));
    } finally {
      propagation.extract = original;
    }
    for (const c of connections) c.close();
    // A client naming a trace of its own: not continued (it could have its requests sampled at will).
    expect((await fetch(`${server.url}/.well-known/openid-configuration`, { headers: CLIENT_CONTEXT })).status).toBe(200);
    await server.stop();
    spans = receiver.spans();
  });

  afterAll(async () => {
    await server?.close();
    await receiver.close();
  });

  /** The spans of each trace whose root is a span named `root`. */
  const tracesRootedAt = (root: string) => {
    const byTrace = new Map<string, OtlpSpan[]>();
    for (const span of spans) byTrace.set(span.traceId, [...(byTrace.get(span.traceId) ?? []), span]);
    return [...byTrace.values()].filter((trace) => trace.some((s) => !s.parentSpanId && s.name === root));
  };

  it('a trace context a client sends is not continued; each request is a root of its own', () => {
    const discovery = spans.filter((s) => s.name === 'GET /.well-known/openid-configuration');
    expect(discovery.length).toBeGreaterThan(0);
    expect(spans.filter((s) => s.traceId === CLIENT_TRACE)).toEqual([]);
  });

  it('nor its trace state and baggage, when an acceptor thread hands the request to the main thread', () => {
    const ready = spans.filter((s) => s.name === 'GET /readyz');
    expect(ready.length).toBeGreaterThanOrEqual(CONNECTIONS);
    expect(spans.filter((s) => s.traceId === CLIENT_TRACE || s.traceState)).toEqual([]);
    // The main thread's spans of handed-over requests continue the acceptor's trace, from its headers only.
    const forwarded = ready.filter((s) => s.thread === 0 && s.parentSpanId);
    if (threads > 1) {
      expect(forwarded.length).toBeGreaterThan(0);
      expect(handedOver.length).toBeGreaterThanOrEqual(forwarded.length);
    }
    for (const headers of handedOver) {
      expect(headers.traceparent).not.toContain(CLIENT_TRACE);
      expect(headers).not.toHaveProperty('tracestate');
      expect(headers).not.toHaveProperty('baggage');
    }
  });

  it('exports to the OTLP endpoint over HTTP with JSON, from every HTTP thread', () => {
    expect(receiver.posts.length).toBeGreaterThan(0);
    for (const post of receiver.posts) {
      expect(post.path).toBe('/v1/traces');
      expect(post.contentType).toBe('application/json');
    }
    expect(new Set(spans.map((s) => s.thread))).toEqual(new Set(Array.from({ length: threads }, (_, i) => i)));
  });

  it('a server span per request, named by method and route pattern, with its status', () => {
    const health = tracesRootedAt('GET /healthz');
    expect(health).toHaveLength(CONNECTIONS);
    const tokenRoots = spans.filter((s) => s.name === 'POST /oauth/v2/token' && !s.parentSpanId);
    expect(tokenRoots).toHaveLength(2 * CONNECTIONS);
    for (const span of tokenRoots) {
      expect(span.kind).toBe(2); // SERVER
      expect(attribute(span, 'http.request.method')).toBe('POST');
      expect(attribute(span, 'http.route')).toBe('/oauth/v2/token');
      expect(attribute(span, 'http.response.status_code')).toBe(200);
    }
    // A forwarded request: the main thread's span continues the acceptor thread's trace.
    const forwarded = spans.filter((s) => s.parentSpanId && s.name === 'GET /healthz');
    expect(forwarded.length).toBe(health.filter((trace) => trace.length > 1).length);
    if (threads > 1) expect(forwarded.length).toBeGreaterThan(0);
    for (const span of forwarded) {
      const parent = spans.find((p) => p.spanId === span.parentSpanId)!;
      expect(parent.name).toBe('GET /healthz');
      expect(parent.thread).toBeGreaterThan(0);
      expect(span.thread).toBe(0);
    }
  });

  it('client authentication, the LMDB commit and the worker pool as children of the request', () => {
    const traces = tracesRootedAt('POST /oauth/v2/token');
    expect(traces).toHaveLength(2 * CONNECTIONS);
    const parentOf = (trace: OtlpSpan[], span: OtlpSpan) => trace.find((s) => s.spanId === span.parentSpanId);
    let committed = 0;
    let signedInPool = 0;
    for (const trace of traces) {
      const auth = trace.find((s) => s.name === 'client authentication')!;
      expect(auth, 'client authentication span').toBeDefined();
      expect(attribute(auth, 'sesame.client_auth.method')).toBe('client_secret_basic');
      expect(parentOf(trace, auth)?.name).toBe('POST /oauth/v2/token');
      const commit = trace.find((s) => s.name === 'lmdb commit');
      if (commit) {
        committed++;
        expect(attribute(commit, 'sesame.durability')).toBe('flush');
        expect(parentOf(trace, commit)?.name).toBe('POST /oauth/v2/token');
      }
      const pool = trace.find((s) => s.name === 'pool sign');
      if (pool) {
        signedInPool++;
        expect(pool.thread).toBe(0);
        expect(parentOf(trace, pool)?.name).toBe('POST /oauth/v2/token');
      }
    }
    // Opaque tokens are committed before they are handed out (LMDB's commit is a span; PostgreSQL's
    // statements are timed by sesame_postgres_statement_duration_seconds); JWTs are signed in the pool.
    expect(committed).toBe(ON_POSTGRES ? 0 : CONNECTIONS);
    expect(signedInPool).toBe(CONNECTIONS);
  });
});

describe('tracing over OTLP/HTTP (protobuf, the default), metrics off', () => {
  it('exports protobuf; metrics are off without SESAME_METRICS_PORT', async () => {
    const receiver = new OtlpReceiver();
    const endpoint = await receiver.start();
    const server = await startInProcess({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, SESAME_SIGNING_ALG: 'ES256' } });
    try {
      expect(server.app.metricsPort).toBeUndefined();
      expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      await server.stop();
      expect(receiver.posts.length).toBeGreaterThan(0);
      for (const post of receiver.posts) expect(post.contentType).toBe('application/x-protobuf');
      // Span names are strings in the protobuf encoding.
      expect(receiver.posts.some((post) => post.body.includes('GET /healthz'))).toBe(true);
    } finally {
      await server.close();
      await receiver.close();
    }
  });
});
