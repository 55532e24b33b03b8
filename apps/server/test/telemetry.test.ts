import { describe, expect, it } from "vitest";
import { readServerEnv } from "../src/config/server-env.js";
import { startTracing } from "../src/telemetry/start-tracing.js";

const ENDPOINT = "http://127.0.0.1:4318";

describe("traces are exported only when OpenTelemetry's variables say so", () => {
  it("starts no tracer without an OTLP endpoint or exporter", () => {
    expect(startTracing(readServerEnv({}))).toBeUndefined();
  });

  it.each([
    ["OTEL_SDK_DISABLED=true", { OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, OTEL_SDK_DISABLED: "true" }],
    ["OTEL_TRACES_EXPORTER=none", { OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, OTEL_TRACES_EXPORTER: "none" }],
  ])("starts none with an endpoint and %s", (_, env) => {
    expect(startTracing(readServerEnv(env))).toBeUndefined();
  });

  it.each([
    ["an OTLP endpoint", { OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT }],
    ["a traces endpoint", { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${ENDPOINT}/v1/traces` }],
    ["OTEL_TRACES_EXPORTER=otlp alone", { OTEL_TRACES_EXPORTER: "otlp" }],
  ])("starts a tracer with %s", async (_, env) => {
    const tracing = startTracing(readServerEnv(env));
    expect(tracing).toBeDefined();
    await tracing?.shutdown();
  });

  it("names a bad variable", () => {
    expect(() => readServerEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT: must be an http\(s\) URL/,
    );
    expect(() => readServerEnv({ OTEL_TRACES_EXPORTER: "zipkin" })).toThrow(
      /OTEL_TRACES_EXPORTER: must be otlp or none/,
    );
    expect(() => readServerEnv({ APTIX_METRICS_TOKEN: "short" })).toThrow(
      /APTIX_METRICS_TOKEN: must be at least 16 characters/,
    );
  });
});
