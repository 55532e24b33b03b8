import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { fail } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import { capturedLog } from "./captured-log.js";
import { setup } from "./http-app-setup.js";

describe("the HTTP interface", () => {
  it("runs a turn and answers a successful InvokeResult with 200", async () => {
    const { post, provider } = setup();
    provider.enqueue({ text: "Hello from the model." });
    const response = await post({ sessionId: "s1", turnId: "t1", instruction: "Hi" });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      successful: true,
      result: {
        kind: "final",
        sessionId: "s1",
        turnId: "t1",
        modeDisplayName: "General",
        primaryOutputText: "Hello from the model.",
        usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, llmCalls: 1 },
      },
      errors: [],
      warnings: [],
    });
  });

  it("lists the catalog's modes and the one a new session starts in (GET /v1/modes), to a key holder only", async () => {
    const { get } = setup();
    const response = await get("/v1/modes");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      successful: true,
      result: { modes: [{ id: "general", displayName: "General" }], defaultModeId: "general" },
      errors: [],
      warnings: [],
    });
    expect((await get("/v1/modes", "wrong-key-0123456789")).status).toBe(401);
  });

  it.each([
    ["a forbidden field", { sessionId: "s", turnId: "t", instruction: "x", mode: "general" }, ["mode"]],
    ["an unknown field", { sessionId: "s", turnId: "t", instruction: "x", colour: "red" }, ["colour"]],
    ["no input", { sessionId: "s", turnId: "t" }, [""]],
    [
      "an absolute artifact path",
      {
        sessionId: "s",
        turnId: "t",
        inputArtifacts: [{ relativePath: "/etc/passwd", fileName: "passwd", contents: "", origin: "ide" }],
      },
      ["inputArtifacts[0].relativePath"],
    ],
    [
      "bad base64",
      {
        sessionId: "s",
        turnId: "t",
        clipboardImages: [{ id: "i", mimeType: "image/png", dataBase64: "not base64!" }],
      },
      ["clipboardImages[0].dataBase64"],
    ],
    [
      "a mixed scenario",
      {
        sessionId: "s",
        turnId: "t",
        instruction: "x",
        toolResults: [{ toolCallId: "c", executionMs: 1, resultJson: "{}" }],
      },
      ["instruction"],
    ],
    ["a server limit", { sessionId: "s", turnId: "t", instruction: "x".repeat(1_001) }, ["instruction"]],
  ])("refuses %s with 400 VALIDATION_FAILED naming the field", async (_name, body, paths) => {
    const { post, provider } = setup();
    const response = await post(body);
    expect(response.status).toBe(400);
    const result = (await response.json()) as {
      successful: boolean;
      errors: Array<{ code: string; details: { fields: Array<{ path: string }> } }>;
    };
    expect(result.successful).toBe(false);
    expect(result).not.toHaveProperty("result");
    expect(result.errors[0]?.code).toBe("VALIDATION_FAILED");
    expect(result.errors[0]?.details.fields.map((field) => field.path)).toEqual(paths);
    expect(provider.requests).toHaveLength(0);
  });

  it("describes the service (GET /v1/service) to a key holder only, with its limits and nothing secret", async () => {
    const { get } = setup();
    const response = await get("/v1/service");
    expect(response.status).toBe(200);
    const { result } = (await response.json()) as { result: unknown };
    // The release it runs, core's version as the releases tag it: never the private server package's 0.0.0.
    const core = JSON.parse(
      readFileSync(new URL("../../../packages/core/package.json", import.meta.url), "utf8"),
    );
    expect(core.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(core.version).not.toBe("0.0.0");
    expect(result).toMatchObject({
      version: core.version,
      store: "pglite",
      providers: ["scripted"],
      conversationContexts: [{ provider: "scripted", defaultModeId: "general" }],
      modes: [{ id: "general", displayName: "General", tools: expect.any(Array) }],
      defaultModeId: "general",
      limits: { maxLlmCallsPerRequest: 12, rateLimitRpm: 600, toolTimeoutMs: 30_000 },
    });
    expect((await get("/v1/service", "wrong-key-0123456789")).status).toBe(401);
  });

  it("refuses a body that is not JSON, not application/json, or too large", async () => {
    const { post } = setup({ maxBodyBytes: 2_000 });
    const notJson = await post("{not json");
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { errors: Array<{ code: string }> }).errors[0]?.code).toBe(
      "VALIDATION_FAILED",
    );

    const wrongType = await post({ sessionId: "s", turnId: "t", instruction: "x" }, undefined, {
      "content-type": "text/plain",
    });
    expect(wrongType.status).toBe(415);

    const tooLarge = await post({ sessionId: "s", turnId: "t", instruction: "x".repeat(5_000) });
    expect(tooLarge.status).toBe(413);
    expect(((await tooLarge.json()) as { errors: Array<{ code: string }> }).errors[0]?.code).toBe(
      "PAYLOAD_TOO_LARGE",
    );
  });

  it("asks for an API key and refuses a wrong one with 401", async () => {
    const { app, post } = setup();
    const missing = await app.request("/v1/sessions/s1");
    expect(missing.status).toBe(401);
    expect(missing.headers.get("www-authenticate")).toContain("Bearer");
    const wrong = await post({ sessionId: "s", turnId: "t", instruction: "x" }, "wrong-key-0123456789");
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { errors: Array<{ code: string }> }).errors[0]?.code).toBe(
      "UNAUTHORIZED",
    );
  });

  it("answers another principal's session, trace and turn exactly like unknown ones", async () => {
    const { post, get, provider } = setup();
    provider.enqueue({ text: "ok" });
    expect((await post({ sessionId: "s1", turnId: "t1", instruction: "Hi" })).status).toBe(200);

    const own = await get("/v1/sessions/s1");
    expect(own.status).toBe(200);
    expect(await own.json()).toMatchObject({
      result: { sessionId: "s1", mode: "general", turns: [{ turnId: "t1", status: "completed" }] },
    });
    expect((await get("/v1/sessions/s1/turns/t1/trace")).status).toBe(200);

    const foreign = await get("/v1/sessions/s1", "bob-key-0123456789ab");
    const unknown = await get("/v1/sessions/nope", "bob-key-0123456789ab");
    expect(foreign.status).toBe(404);
    const foreignBody = (await foreign.json()) as { errors: Array<{ code: string; message: string }> };
    const unknownBody = (await unknown.json()) as { errors: Array<{ code: string; message: string }> };
    expect(foreignBody.errors[0]?.code).toBe("SESSION_NOT_FOUND");
    expect(unknownBody.errors[0]?.code).toBe("SESSION_NOT_FOUND");
    expect((await get("/v1/sessions/s1/turns/t1/trace", "bob-key-0123456789ab")).status).toBe(404);
    expect((await get("/v1/files/file_1", "bob-key-0123456789ab")).status).toBe(404);

    // A continuation from bob for alice's session names nothing bob owns.
    const continuation = await post(
      { sessionId: "s1", turnId: "t1", toolResults: [{ toolCallId: "c", executionMs: 1, resultJson: "1" }] },
      "bob-key-0123456789ab",
    );
    expect(continuation.status).toBe(404);
  });

  it("answers liveness, readiness, the OpenAPI document, the docs page and unknown routes", async () => {
    const { app } = setup();
    expect((await app.request("/healthz")).status).toBe(200);
    expect(await (await app.request("/readyz")).json()).toMatchObject({
      successful: true,
      result: { status: "ready" },
    });
    const document = (await (await app.request("/openapi.json")).json()) as {
      openapi: string;
      paths: Record<string, unknown>;
      components: { schemas: Record<string, unknown> };
    };
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.paths)).toContain("/v1/agent/execute");
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining([
        "AgentExecuteRequest",
        "AgentExecuteResult",
        "InvokeFailure",
        "SessionSummary",
      ]),
    );
    // Scalar renders the reference from the document, its bundle served by the service itself.
    const docs = await app.request("/docs");
    expect(docs.headers.get("content-type")).toContain("text/html");
    const page = await docs.text();
    expect(page).toContain('<script src="docs/scalar.js">');
    expect(page).toContain('"url": "openapi.json"');
    expect(page).not.toMatch(/https?:\/\//);
    const bundle = await app.request("/docs/scalar.js");
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get("content-type")).toContain("text/javascript");
    expect(bundle.headers.get("content-encoding")).toBeNull();
    const script = await bundle.text();
    expect(script).toContain("createApiReference");
    // Compressed for a browser that takes gzip: a fifth of the bytes.
    const gzipped = await app.request("/docs/scalar.js", { headers: { "accept-encoding": "gzip, br" } });
    expect(gzipped.headers.get("content-encoding")).toBe("gzip");
    const bytes = Buffer.from(await gzipped.arrayBuffer());
    expect(bytes.length).toBeLessThan(script.length / 2);
    expect(gunzipSync(bytes).toString()).toBe(script);
    const refused = await app.request("/docs/scalar.js", { headers: { "accept-encoding": "gzip;q=0" } });
    expect(refused.headers.get("content-encoding")).toBeNull();
    const missing = await app.request("/v1/nothing", {
      headers: { authorization: "Bearer alice-key-0123456789" },
    });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { errors: Array<{ code: string }> }).errors[0]?.code).toBe(
      "ROUTE_NOT_FOUND",
    );
  });

  it("answers 503 NOT_READY when the database is not ready", async () => {
    const { app } = setup({ ready: false });
    const response = await app.request("/readyz");
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({
      successful: false,
      errors: [{ code: "NOT_READY", message: "Not ready: database unreachable" }],
    });
  });

  it("serves local mode to loopback callers without a key, and refuses other machines 403 on every route", async () => {
    const { app, provider } = setup({ apiKeys: new Map() });
    provider.enqueue({ text: "local" });
    const response = await app.request(
      "/v1/agent/execute",
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ sessionId: "s", turnId: "t", instruction: "x" }),
      },
      LOOPBACK,
    );
    expect(response.status).toBe(200);
    for (const path of LOCAL_MODE_ROUTES) {
      const remote = await app.request(path, {}, { incoming: { socket: { remoteAddress: "10.1.2.3" } } });
      expect(await refusal(remote), path).toEqual({
        status: 403,
        code: "FORBIDDEN",
        message:
          "This service runs in local mode and answers callers on this machine only: the request came from 10.1.2.3.",
      });
    }
  });

  it.each([
    [
      "a Host header naming another site",
      { host: "rebound.example:8787" },
      'its Host header "rebound.example:8787" is not localhost, 127.x.x.x or [::1]',
    ],
    ["a Host header that is not a name", { host: "localhost@rebound.example" }, "Host header"],
    [
      "a page of another site",
      { host: "localhost:8787", origin: "https://evil.example" },
      "https://evil.example",
    ],
    ["a page with an opaque origin", { host: "127.0.0.1:8787", origin: "null" }, 'page of "null"'],
    [
      "a proxy's Forwarded header",
      { host: "127.0.0.1:8787", forwarded: "for=203.0.113.9" },
      "the request came through a proxy (its Forwarded header), which forwards someone else",
    ],
    [
      "a proxy's X-Forwarded-For header",
      { host: "127.0.0.1:8787", "x-forwarded-for": "127.0.0.1" },
      "its X-Forwarded-For header",
    ],
    ["a proxy's Via header", { host: "localhost", via: "1.1 nginx" }, "its Via header"],
  ])(
    "refuses in local mode %s 403 on every route, as it refuses other machines",
    async (_name, headers, reason) => {
      const { app } = setup({ apiKeys: new Map() });
      for (const path of LOCAL_MODE_ROUTES) {
        const answer = await refusal(await app.request(path, { headers }, LOOPBACK));
        expect(answer, path).toMatchObject({ status: 403, code: "FORBIDDEN" });
        expect(answer.message, path).toContain("This service runs in local mode");
        expect(answer.message, path).toContain(reason);
      }
    },
  );

  it.each<Record<string, string>>([
    { host: "localhost:8787" },
    { host: "LOCALHOST" },
    { host: "127.0.0.2:80" },
    { host: "[::1]:8787" },
    { host: "[::1]:8787", origin: "http://localhost:5173" },
    { host: "localhost:8787", origin: "http://[::1]:3000" },
  ])("serves local mode with loopback Host and Origin %o", async (headers) => {
    const { app } = setup({ apiKeys: new Map() });
    const response = await app.request("/v1/sessions/s", { headers }, LOOPBACK);
    // Past the local-mode check: the session is unknown, not the caller.
    expect(response.status).toBe(404);
    for (const path of ["/healthz", "/readyz", "/metrics", "/openapi.json", "/docs"]) {
      expect((await app.request(path, { headers }, LOOPBACK)).status, path).toBe(200);
    }
  });

  it("logs a failed answer's errors with the request id, at error for 5xx and info for 4xx", async () => {
    const { logger, lines } = capturedLog();
    const { post, get, service, provider } = setup({ logger });
    provider.enqueue({
      failure: fail("PROVIDER_ERROR", "The provider answered 500.", { providerStatus: 500 }),
    });
    expect((await post({ sessionId: "s1", turnId: "t1", instruction: "Hi" })).status).toBe(502);
    expect((await get("/v1/sessions/nope")).status).toBe(404);
    service.getSession = () => {
      throw new Error("store exploded");
    };
    const crashed = await get("/v1/sessions/s1");
    expect(crashed.status).toBe(500);

    const requests = lines.filter((line) => line.message === "request");
    expect(requests.map((line) => [line.level, line.status])).toEqual([
      ["error", 502],
      ["info", 404],
      ["error", 500],
    ]);
    for (const line of requests) expect(line.requestId).toEqual(expect.any(String));
    expect(requests[0]?.errors).toEqual([
      expect.objectContaining({
        code: "PROVIDER_ERROR",
        details: expect.objectContaining({ providerStatus: 500 }),
      }),
    ]);
    expect(requests[1]?.errors).toEqual([expect.objectContaining({ code: "SESSION_NOT_FOUND" })]);
    expect(requests[2]?.errors).toEqual([
      expect.objectContaining({ code: "INTERNAL", details: { requestId: requests[2]?.requestId } }),
    ]);
    // The log is structured JSON: every field survives serialization.
    expect(JSON.parse(JSON.stringify(requests[0]))).toEqual(requests[0]);
  });

  it("carries the X-Request-Id it answers into the access line and every line logged while handling the request", async () => {
    const { logger, lines } = capturedLog();
    const { get, service } = setup({ logger });
    service.getSession = () => {
      throw new Error("store exploded");
    };
    const crashed = await get("/v1/sessions/s1");
    const answered = await get("/healthz");
    const requestId = crashed.headers.get("x-request-id");
    expect(requestId).toEqual(expect.any(String));
    expect(answered.headers.get("x-request-id")).not.toBe(requestId);

    expect(lines.filter((line) => line.requestId === requestId)).toEqual([
      expect.objectContaining({
        level: "error",
        message: "unhandled error",
        // Its type and frames: never its message, which may quote a statement and its parameters.
        fault: { type: "Error", stack: expect.stringMatching(/^at /) },
      }),
      expect.objectContaining({ level: "error", message: "request", path: "/v1/sessions/s1", status: 500 }),
    ]);
    expect(JSON.stringify(lines)).not.toContain("store exploded");
    expect(lines.find((line) => line.path === "/healthz")).toMatchObject({
      message: "request",
      requestId: answered.headers.get("x-request-id"),
      status: 200,
    });
  });

  it("writes no access line below LOG_LEVEL, and no Authorization header in any line", async () => {
    const { logger, lines } = capturedLog("warn");
    const { get } = setup({ logger });
    expect((await get("/v1/sessions/nope")).status).toBe(404);
    expect(lines).toEqual([]);
    const verbose = capturedLog("trace");
    await setup({ logger: verbose.logger }).get("/v1/sessions/nope");
    expect(verbose.lines).toHaveLength(1);
    expect(JSON.stringify(verbose.lines)).not.toContain("alice-key-0123456789");
  });

  it("answers a known path asked with another method 405 with Allow", async () => {
    const { app, get } = setup();
    const wrongMethod = await get("/v1/agent/execute");
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe("POST");
    expect(await wrongMethod.json()).toMatchObject({
      successful: false,
      errors: [{ code: "METHOD_NOT_ALLOWED", details: { method: "GET", allow: ["POST"] } }],
    });
    const putSession = await app.request("/v1/sessions/s1", {
      method: "PUT",
      headers: { authorization: "Bearer alice-key-0123456789" },
    });
    expect(putSession.status).toBe(405);
    expect(putSession.headers.get("allow")).toBe("DELETE, GET, HEAD");
    const postHealth = await app.request("/healthz", { method: "POST" });
    expect(postHealth.status).toBe(405);
    expect(postHealth.headers.get("allow")).toBe("GET, HEAD");
    // Authentication still comes first.
    expect((await app.request("/v1/agent/execute")).status).toBe(401);
  });

  it("streams a turn as server-sent events ending in the same InvokeResult, and replays it after Last-Event-ID", async () => {
    const { app, post, get, provider } = setup();
    provider.enqueue({ text: "Streaming is fun." });
    const response = await post({ sessionId: "s1", turnId: "t1", instruction: "Hi", stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const events = parseEventStream(await response.text());
    expect(events.map((event) => event.event)).toEqual([
      "output_text.delta",
      "output_text.delta",
      "output_text.delta",
      "result",
    ]);
    expect(events.map((event) => event.id)).toEqual(["0-0", "0-1", "0-2", "0-result"]);
    expect(
      events
        .slice(0, 3)
        .map((event) => (JSON.parse(event.data) as { delta: string }).delta)
        .join(""),
    ).toBe("Streaming is fun.");
    const result = JSON.parse(events[3]?.data ?? "null") as {
      successful: boolean;
      result: { primaryOutputText: string };
    };
    expect(result).toMatchObject({
      successful: true,
      result: { kind: "final", primaryOutputText: "Streaming is fun." },
    });

    const after = (lastEventId: string) =>
      app.request("/v1/sessions/s1/turns/t1/events", {
        headers: { authorization: "Bearer alice-key-0123456789", "last-event-id": lastEventId },
      });
    const resumed = await after("0-1");
    expect(resumed.headers.get("content-type")).toContain("text/event-stream");
    expect(parseEventStream(await resumed.text()).map((event) => event.id)).toEqual(["0-2", "0-result"]);
    const byQuery = await get("/v1/sessions/s1/turns/t1/events?lastEventId=0-2");
    expect(parseEventStream(await byQuery.text()).map((event) => event.id)).toEqual(["0-result"]);
    const badId = await after("not-an-id");
    expect(badId.status).toBe(400);
    const foreign = await get("/v1/sessions/s1/turns/t1/events", "bob-key-0123456789ab");
    expect(foreign.status).toBe(404);
  });
});

/** What @hono/node-server passes for a caller on this machine. */
const LOOPBACK = { incoming: { socket: { remoteAddress: "127.0.0.1" } } };

/** Routes of every kind: the API, health, metrics, the API description and its page, and no route at all. */
const LOCAL_MODE_ROUTES = [
  "/v1/sessions/s",
  "/healthz",
  "/readyz",
  "/metrics",
  "/openapi.json",
  "/docs",
  "/docs/scalar.js",
  "/nowhere",
];

/** A refusal's status and its first error's code and message. */
async function refusal(response: Response) {
  const body = (await response.json()) as { errors: Array<{ code: string; message: string }> };
  return { status: response.status, code: body.errors[0]?.code, message: body.errors[0]?.message };
}

interface ParsedEvent {
  id?: string;
  event?: string;
  data: string;
}

/** Reads an event-stream body (comment lines are skipped). */
function parseEventStream(text: string): ParsedEvent[] {
  return text
    .split("\n\n")
    .map((block) => block.split("\n").filter((line) => line !== "" && !line.startsWith(":")))
    .filter((lines) => lines.length > 0)
    .map((lines) => {
      const event: ParsedEvent = { data: "" };
      for (const line of lines) {
        const [field, ...rest] = line.split(":");
        const value = rest.join(":").replace(/^ /, "");
        if (field === "id") event.id = value;
        else if (field === "event") event.event = value;
        else if (field === "data") event.data += value;
      }
      return event;
    });
}
