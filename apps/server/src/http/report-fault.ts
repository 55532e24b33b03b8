import { trace } from "@opentelemetry/api";
import type { Context } from "hono";
import { faultSummary } from "../logging/fault-summary.js";
import type { AppEnv } from "./app-env.js";

/**
 * Tells the operator of `error`, which the request did not cause: the request's span keeps its detail (the
 * message, which may quote a statement and its parameters), its log line only what `faultSummary` gives.
 */
export function reportFault(c: Context<AppEnv>, error: unknown, message: string): void {
  trace.getActiveSpan()?.recordException(error instanceof Error ? error : String(error));
  c.var.logger.error({ fault: faultSummary(error) }, message);
}
