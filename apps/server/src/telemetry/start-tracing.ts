import { context, type Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import {
  defaultResource,
  detectResources,
  resourceAttributesEnvDetector,
  resourceFromAttributes,
} from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import type { ServerEnv } from "../config/server-env.js";

/** The service's traces while they are exported: its tracer, and how to send what is left on shutdown. */
export interface Tracing {
  tracer: Tracer;
  /** Exports the spans still buffered, then stops exporting. */
  shutdown(): Promise<void>;
}

type TracingEnv = Pick<
  ServerEnv,
  | "OTEL_SDK_DISABLED"
  | "OTEL_TRACES_EXPORTER"
  | "OTEL_EXPORTER_OTLP_ENDPOINT"
  | "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
  | "OTEL_SERVICE_NAME"
>;

/**
 * Starts exporting traces with OTLP over HTTP (JSON bodies) when OpenTelemetry's standard variables ask for it:
 * an OTLP endpoint is set, or `OTEL_TRACES_EXPORTER=otlp` (to the exporter's default, localhost:4318). Otherwise,
 * or with `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`, it starts nothing and answers undefined: no
 * tracer, no span objects, nothing paid per request.
 *
 * The tracer is this service's, not registered globally, so two services in one process keep their own exports.
 * Spans are batched and sent off the request path.
 */
export function startTracing(env: TracingEnv): Tracing | undefined {
  if (env.OTEL_SDK_DISABLED === "true" || env.OTEL_TRACES_EXPORTER === "none") return undefined;
  const endpoint = tracesEndpoint(env);
  if (endpoint === undefined && env.OTEL_TRACES_EXPORTER !== "otlp") return undefined;
  useAsyncContext();
  const provider = new TracerProvider({
    resource: defaultResource()
      .merge(detectResources({ detectors: [resourceAttributesEnvDetector] }))
      .merge(resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME })),
    spanProcessors: [
      new BatchSpanProcessor({ exporter: new OTLPTraceExporter(endpoint ? { url: endpoint } : {}) }),
    ],
  });
  return { tracer: provider.getTracer("aptix"), shutdown: () => provider.shutdown() };
}

/** The traces endpoint: the per-signal variable as it is, else the general one with `/v1/traces` (OTLP's rule). */
function tracesEndpoint(env: TracingEnv): string | undefined {
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return base === undefined ? undefined : `${base.replace(/\/+$/, "")}/v1/traces`;
}

let asyncContext = false;

/**
 * Makes the active span follow async calls (a request's span is the parent of its turn's, and so on down). The
 * context manager is process-wide by OpenTelemetry's design: set once, by the first service that traces.
 */
function useAsyncContext(): void {
  if (asyncContext) return;
  asyncContext = true;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}
