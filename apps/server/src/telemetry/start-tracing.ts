import { context, type DiagLogFunction, DiagLogLevel, diag, type Tracer } from "@opentelemetry/api";
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
export function startTracing(env: TracingEnv, warn: (message: string) => void): Tracing | undefined {
  if (env.OTEL_SDK_DISABLED === "true" || env.OTEL_TRACES_EXPORTER === "none") return undefined;
  const endpoint = tracesEndpoint(env);
  if (endpoint === undefined && env.OTEL_TRACES_EXPORTER !== "otlp") return undefined;
  useProcessWide(warn);
  const provider = new TracerProvider({
    resource: defaultResource()
      .merge(detectResources({ detectors: [resourceAttributesEnvDetector] }))
      .merge(resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME })),
    spanProcessors: [
      new BatchSpanProcessor({ exporter: new OTLPTraceExporter(endpoint ? { url: endpoint } : {}) }),
    ],
  });
  return {
    tracer: provider.getTracer("aptix"),
    // A collector down at shutdown loses the last spans, and must not fail the shutdown.
    shutdown: () =>
      provider
        .shutdown()
        .catch((error: unknown) =>
          warn(
            `OpenTelemetry: the last spans could not be exported: ${error instanceof Error ? error.message : String(error)}`,
          ),
        ),
  };
}

/** The traces endpoint: the per-signal variable as it is, else the general one with `/v1/traces` (OTLP's rule). */
function tracesEndpoint(env: TracingEnv): string | undefined {
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return base === undefined ? undefined : `${base.replace(/\/+$/, "")}/v1/traces`;
}

let processWide = false;

/**
 * What OpenTelemetry keeps per process, set once, by the first service that traces: the context manager that
 * makes the active span follow async calls (a request's span is the parent of its turn's, and so on down), and
 * the diagnostic logger, through which alone an export that fails (a collector down or refusing) is told:
 * without it spans would be lost in silence.
 */
function useProcessWide(warn: (message: string) => void): void {
  if (processWide) return;
  processWide = true;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const told: DiagLogFunction = (message, ...args) =>
    warn(
      [
        "OpenTelemetry:",
        message,
        ...args.map((arg) => (arg instanceof Error ? arg.message : String(arg))),
      ].join(" "),
    );
  const quiet: DiagLogFunction = () => {};
  diag.setLogger({ error: told, warn: told, info: quiet, debug: quiet, verbose: quiet }, DiagLogLevel.WARN);
}
