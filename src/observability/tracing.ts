import type * as OtelApi from '@opentelemetry/api';

/**
 * Spans through @opentelemetry/api, when tracing is on (OTEL_EXPORTER_OTLP_ENDPOINT set, see
 * otel-sdk.ts). This module only holds the tracer the SDK installed: the API is imported for its
 * types only, so with tracing off nothing of OpenTelemetry is loaded, and each traced place costs
 * one comparison.
 */
type Api = typeof OtelApi;
let api: Api | undefined;
let tracer: OtelApi.Tracer | undefined;

type SpanAttributes = OtelApi.Attributes;

/** Traces this thread's work from now on; returns a function that stops it. */
export function installTracer(otel: Api, installed: OtelApi.Tracer): () => void {
  api = otel;
  tracer = installed;
  return () => {
    if (tracer !== installed) return;
    api = undefined;
    tracer = undefined;
  };
}

export function tracingOn(): boolean {
  return tracer !== undefined;
}

/**
 * Runs `work` in a span named `name`, a child of the active span (the request's): its end is when
 * `work` settles, and a failure marks it as an error. Without tracing, just runs `work`.
 */
export function traced<T>(name: string, attributes: SpanAttributes, work: () => Promise<T>): Promise<T> {
  if (tracer === undefined) return work();
  const otel = api!;
  return tracer.startActiveSpan(name, { attributes }, (span) =>
    work().then(
      (result) => {
        span.end();
        return result;
      },
      (error: unknown) => {
        span.setStatus({ code: otel.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
        span.end();
        throw error;
      },
    ),
  );
}

/** A request's span and the context its handler runs in (undefined without tracing). */
export interface RequestTrace {
  span: OtelApi.Span;
  context: OtelApi.Context;
}

/**
 * Starts the span of an HTTP request (kind server), named `METHOD route` as the OpenTelemetry HTTP
 * conventions say, continuing the trace of an incoming `traceparent` header. `parentHeaders`: the
 * request's headers when its trace context (`traceparent`) is to be continued.
 */
export function startRequestTrace(method: string, route: string, path: string, parentHeaders: Readonly<Record<string, string>> | undefined): RequestTrace | undefined {
  if (tracer === undefined) return undefined;
  const otel = api!;
  const parent = parentHeaders === undefined ? otel.ROOT_CONTEXT : otel.propagation.extract(otel.ROOT_CONTEXT, parentHeaders);
  const span = tracer.startSpan(`${method} ${route}`, { kind: otel.SpanKind.SERVER, attributes: { 'http.request.method': method, 'http.route': route, 'url.path': path } }, parent);
  return { span, context: otel.trace.setSpan(parent, span) };
}

/** Runs `work` with the request's span active, so the spans it starts are its children. */
export function inRequestTrace<T>(trace: RequestTrace | undefined, work: () => T): T {
  return trace === undefined ? work() : api!.context.with(trace.context, work);
}

export function endRequestTrace(trace: RequestTrace, status: number | 'aborted'): void {
  if (status === 'aborted') {
    trace.span.setAttribute('sesame.aborted', true);
  } else {
    trace.span.setAttribute('http.response.status_code', status);
    if (status >= 500) trace.span.setStatus({ code: api?.SpanStatusCode.ERROR ?? 2 });
  }
  trace.span.end();
}

/**
 * Puts the active context's trace context (`traceparent`, `tracestate`, `baggage`) into headers a
 * request is handed on with (acceptor → main thread), in place of any the client sent: the main
 * thread continues a handed-over trace as its own, so only what this thread decided to continue
 * (a trusted parent's, see startRequestTrace's callers) may reach it, never a client's header that
 * the injection happens not to overwrite (an empty `tracestate`, no baggage).
 */
export function injectTraceContext(headers: Record<string, string>): void {
  if (tracer === undefined) return;
  const propagation = api!.propagation;
  for (const field of propagation.fields()) delete headers[field];
  propagation.inject(api!.context.active(), headers);
}
