import * as otel from '@opentelemetry/api';
import { NodeTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import type { TracingConfig } from '../config.js';
import { installTracer } from './tracing.js';

/**
 * The OpenTelemetry SDK, loaded (by dynamic import) only when tracing is configured: a tracer
 * provider for this thread exporting its spans in batches over OTLP/HTTP (protobuf by default, JSON
 * with OTEL_EXPORTER_OTLP_PROTOCOL=http/json). The exporter and SDK read the other standard OTEL_*
 * variables themselves (headers, timeout, sampler, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES).
 * Each HTTP thread runs its own; returns a function that sends what is left and stops it.
 */
export async function startTracing(config: TracingConfig, thread: number): Promise<() => Promise<void>> {
  const { OTLPTraceExporter } = config.protocol === 'http/json' ? await import('@opentelemetry/exporter-trace-otlp-http') : await import('@opentelemetry/exporter-trace-otlp-proto');
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': 'sesame', 'sesame.http_thread': thread }))
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over Sesame's defaults.
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: config.endpoint }))] });
  // The global provider, context manager (AsyncLocalStorage: a span's children are found across
  // awaits) and W3C trace context propagator of this thread.
  provider.register();
  const uninstall = installTracer(otel, provider.getTracer('sesame'));
  return async () => {
    uninstall();
    await provider.shutdown();
    // As before tracing started: a later server in this process (tests) starts afresh.
    otel.trace.disable();
    otel.context.disable();
    otel.propagation.disable();
  };
}
