import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { readServerEnv } from "../src/config/server-env.js";
import { startTracing } from "../src/telemetry/start-tracing.js";

const ENDPOINT = "http://127.0.0.1:4318";

/** What OpenTelemetry told the service (its diagnostics are per process: the first tracer started takes them). */
const warnings: string[] = [];
const warn = (message: string) => warnings.push(message);

/** A loopback port nothing listens on: one a server had, closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("traces are exported only when OpenTelemetry's variables say so", () => {
  it("starts no tracer without an OTLP endpoint or exporter", () => {
    expect(startTracing(readServerEnv({}), warn)).toBeUndefined();
  });

  it.each([
    ["OTEL_SDK_DISABLED=true", { OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, OTEL_SDK_DISABLED: "true" }],
    ["OTEL_TRACES_EXPORTER=none", { OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, OTEL_TRACES_EXPORTER: "none" }],
  ])("starts none with an endpoint and %s", (_, env) => {
    expect(startTracing(readServerEnv(env), warn)).toBeUndefined();
  });

  it.each([
    ["an OTLP endpoint", { OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT }],
    ["a traces endpoint", { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${ENDPOINT}/v1/traces` }],
    ["OTEL_TRACES_EXPORTER=otlp alone", { OTEL_TRACES_EXPORTER: "otlp" }],
  ])("starts a tracer with %s", async (_, env) => {
    const tracing = startTracing(readServerEnv(env), warn);
    expect(tracing).toBeDefined();
    await tracing?.shutdown();
  });

  it("tells of an export that failed (the collector down), and still shuts down", async () => {
    // The exporter's own variable: it gives up on the collector after a second rather than ten.
    vi.stubEnv("OTEL_EXPORTER_OTLP_TIMEOUT", "1000");
    const port = await closedPort();
    const tracing = startTracing(
      readServerEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` }),
      warn,
    );
    tracing?.tracer.startSpan("lost").end();
    await tracing?.shutdown();
    expect(warnings.join("\n")).toMatch(/^OpenTelemetry: .*ECONNREFUSED/m);
  });

  it("names a bad variable", () => {
    expect(() => readServerEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT="collector:4318": must be an http\(s\) URL/,
    );
    expect(() => readServerEnv({ OTEL_TRACES_EXPORTER: "zipkin" })).toThrow(
      /OTEL_TRACES_EXPORTER="zipkin": must be otlp or none/,
    );
    expect(() => readServerEnv({ APTIX_METRICS_TOKEN: "short" })).toThrow(
      /APTIX_METRICS_TOKEN: must be at least 16 characters/,
    );
  });
});
