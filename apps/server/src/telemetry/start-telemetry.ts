import type { TurnObserver } from "@aptix/core";
import type { Tracer } from "@opentelemetry/api";
import type { ServerEnv } from "../config/server-env.js";
import { observers } from "./observers.js";
import { ServiceMetrics, type ServiceMetricsOptions } from "./service-metrics.js";
import { startTracing } from "./start-tracing.js";
import { tracingObserver } from "./tracing-observer.js";

/** What the service is watched with: metrics always, traces when the environment exports them. */
export interface Telemetry {
  metrics: ServiceMetrics;
  /** Present only while traces are exported. */
  tracer?: Tracer;
  /** What core's service reports its turns to: the metrics, and the traces when exported. */
  observer: TurnObserver;
  /** Sends the spans still buffered; call last on shutdown, so the spans of the shutdown are sent too. */
  shutdown(): Promise<void>;
}

export interface TelemetryOptions extends ServiceMetricsOptions {
  /** Where a failed export of traces is told. */
  warn: (message: string) => void;
}

export function startTelemetry(env: ServerEnv, options: TelemetryOptions): Telemetry {
  const metrics = new ServiceMetrics(options);
  const tracing = startTracing(env, options.warn);
  if (!tracing) return { metrics, observer: metrics.observer, shutdown: async () => {} };
  return {
    metrics,
    tracer: tracing.tracer,
    // The span is outermost: the metrics' own time is inside it, as the work's.
    observer: observers(tracingObserver(tracing.tracer), metrics.observer),
    shutdown: () => tracing.shutdown(),
  };
}
