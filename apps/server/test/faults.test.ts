import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { afterAll, describe, expect, it } from "vitest";
import { loggingFaults } from "../src/telemetry/logging-faults.js";
import { observers } from "../src/telemetry/observers.js";
import { ServiceMetrics } from "../src/telemetry/service-metrics.js";
import { tracingObserver } from "../src/telemetry/tracing-observer.js";
import { capturedLog } from "./captured-log.js";

/** A driver's error as drizzle wraps it: its message quotes the statement and its parameters. */
function driverError(): Error {
  const cause = Object.assign(new Error("unsupported Unicode escape sequence"), { code: "22P05" });
  cause.name = "PostgresError";
  const error = new Error(
    'Failed query: insert into "turn_events" ...\nparams: You are the operator\'s secret',
    {
      cause,
    },
  );
  error.name = "DrizzleQueryError";
  return error;
}

const ROUND = {
  sessionId: "s1",
  turnId: "t1",
  round: 0,
  mode: "general",
  provider: "openai",
  model: "gpt-test",
};

describe("a round's unexpected failure", () => {
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  afterAll(() => {
    context.disable();
  });

  it("is recorded whole on the round's span, and logged as its types, codes and frames only", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    const tracer = provider.getTracer("t");
    const { logger, lines } = capturedLog();
    const observer = loggingFaults(
      observers(tracingObserver(tracer), new ServiceMetrics({ dbPoolInUse: () => 0 }).observer),
      logger,
    );
    const error = driverError();
    await observer.round(ROUND, async () => {
      observer.fault?.(ROUND, error);
      return { successful: false, errors: [{ code: "INTERNAL", message: "failed" }], warnings: [] };
    });

    await provider.forceFlush();
    const [span] = exporter.getFinishedSpans();
    expect(span?.events.map((event) => event.attributes?.["exception.message"])).toEqual([error.message]);
    expect(lines).toEqual([
      expect.objectContaining({
        level: "error",
        message: "round failed unexpectedly",
        sessionId: "s1",
        turnId: "t1",
        round: 0,
        traceId: span?.spanContext().traceId,
        fault: {
          type: "DrizzleQueryError",
          causes: [{ type: "PostgresError", code: "22P05" }],
          stack: expect.stringMatching(/^at /),
        },
      }),
    ]);
    expect(JSON.stringify(lines)).not.toMatch(/Failed query|params|secret|insert/);
  });
});
