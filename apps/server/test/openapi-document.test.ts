import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { DEFAULT_REQUEST_LIMITS, FIELD_LENGTH_LIMITS, type SessionSummary } from "@aptix/contracts";
import type { TurnTrace } from "@aptix/core/testing";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { z } from "zod";
import type {
  Jsonified,
  SessionSummarySchema,
  TurnTraceSchema,
} from "../src/http/openapi/session-view-schemas.js";
import { setup } from "./http-app-setup.js";

interface OpenApiDocument {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>
  >;
}

/** Checks bodies against the schemas /openapi.json gives for each route's answer, as a client generator would. */
async function openApiValidator(app: ReturnType<typeof setup>["app"]) {
  const document = (await (await app.request("/openapi.json")).json()) as OpenApiDocument;
  // Not strict: the document holds OpenAPI keywords beside its schemas. Dates are checked by their pattern.
  const ajv = new Ajv2020({ strict: false, allErrors: true, formats: { "date-time": true } });
  // The component `$ref`s point into the document: it is the base of every schema compiled here.
  ajv.addSchema(document, "openapi.json");
  return (path: string, method: string, status: number, body: unknown) => {
    const schema =
      document.paths[path]?.[method]?.responses[String(status)]?.content?.["application/json"]?.schema;
    if (schema === undefined)
      throw new Error(`/openapi.json has no JSON answer ${status} for ${method} ${path}`);
    const validate = ajv.compile({ $ref: `openapi.json#${pointerTo(path, method, status)}` });
    const valid = validate(body);
    return valid ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);
  };
}

const pointerTo = (path: string, method: string, status: number) =>
  `/paths/${path.replaceAll("~", "~0").replaceAll("/", "~1")}/${method}/responses/${status}/content/application~1json/schema`;

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  requestBody?: { content: Record<string, { example?: unknown; examples?: object }> };
  responses: Record<string, { description: string; content?: Record<string, { example?: unknown }> }>;
}

describe("the OpenAPI document", () => {
  it("passes `redocly lint` with no error, generated from the app without a network server", () => {
    // The script CI runs (`pnpm lint:openapi`): Redocly exits non-zero on any error.
    const lint = spawnSync(
      join(import.meta.dirname, "..", "node_modules", ".bin", "tsx"),
      ["--conditions=@aptix/source", "scripts/lint-openapi.ts"],
      { cwd: join(import.meta.dirname, ".."), encoding: "utf8", timeout: 120_000 },
    );
    expect(lint.status, `${lint.stdout}\n${lint.stderr}`).toBe(0);
    expect(lint.stdout + lint.stderr).toContain("Your API description is valid");
  }, 150_000);

  it("gives every operation a unique operationId, a summary, tags and examples", async () => {
    const { app } = setup();
    const document = (await (await app.request("/openapi.json")).json()) as {
      paths: Record<string, Record<string, Operation>>;
      tags: Array<{ name: string }>;
    };
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ at: `${method} ${path}`, ...operation })),
    );
    expect(operations.length).toBeGreaterThanOrEqual(16);
    const tags = document.tags.map((tag) => tag.name);
    for (const operation of operations) {
      expect(operation.operationId, operation.at).toMatch(/^[a-z][A-Za-z]+$/);
      expect(operation.summary, operation.at).toEqual(expect.any(String));
      expect(
        operation.tags?.every((tag) => tags.includes(tag)),
        operation.at,
      ).toBe(true);
      const body = Object.values(operation.requestBody?.content ?? {});
      expect(
        body.every((media) => media.example !== undefined || media.examples !== undefined),
        operation.at,
      ).toBe(true);
      // Its success: 200, or 201 where it makes something (a fork).
      const success = operation.responses["200"] ?? operation.responses["201"];
      const answer = Object.values(success?.content ?? {});
      expect(answer.length, operation.at).toBeGreaterThan(0);
      expect(
        answer.every((media) => media.example !== undefined),
        operation.at,
      ).toBe(true);
    }
    expect(new Set(operations.map((operation) => operation.operationId)).size).toBe(operations.length);
  });

  it("describes every route the app answers, but the reference's own and the console's", async () => {
    const { app } = setup();
    const document = (await (await app.request("/openapi.json")).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    // `/` and `/docs/` redirect to the reference.
    const ownRoutes = new Set(["/openapi.json", "/docs", "/docs/scalar.js", "/", "/docs/"]);
    // The console's page and files are a web app the service serves, not API operations.
    const isConsole = (path: string) => path === "/console" || path.startsWith("/console/");
    const served = app.routes
      .filter((route) => route.method !== "ALL" && !ownRoutes.has(route.path) && !isConsole(route.path))
      .map((route) => `${route.method.toLowerCase()} ${route.path.replace(/:(\w+)/g, "{$1}")}`);
    const described = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method} ${path}`),
    );
    // A route added with app.get/post… is missing here: define it with createRoute and app.openapi.
    expect(new Set(served)).toEqual(new Set(described));
  });

  it("names no internal record ids in the text users read", async () => {
    const { app } = setup();
    const text = await (await app.request("/openapi.json")).text();
    expect(text).not.toMatch(/AGN-\d/);
  });

  it("describes the bodies the routes really answer", async () => {
    const { app, post, get, provider } = setup();
    const check = await openApiValidator(app);
    const answer = async (response: Response) => [response.status, await response.json()] as const;

    provider.enqueue(
      { toolCalls: [{ name: "read_file", arguments: { path: "a.ts", startLine: null, endLine: null } }] },
      { text: "Done." },
    );
    const cases: Array<[string, string, Response]> = [
      ["/v1/agent/execute", "post", await post({ sessionId: "s1", turnId: "t1", instruction: "Read a.ts" })],
      [
        "/v1/agent/execute",
        "post",
        await post({
          sessionId: "s1",
          turnId: "t1",
          toolResults: [{ toolCallId: "call_1_1", executionMs: 3, resultJson: '"export {}"' }],
        }),
      ],
      ["/v1/agent/execute", "post", await post({ sessionId: "s1", turnId: "t2", mode: "general" })],
      ["/v1/modes", "get", await get("/v1/modes")],
      ["/v1/sessions/{sessionId}", "get", await get("/v1/sessions/s1")],
      ["/v1/sessions/{sessionId}", "get", await get("/v1/sessions/nope")],
      ["/v1/sessions/{sessionId}", "get", await get("/v1/sessions/s1", "wrong-key-0123456789")],
      ["/v1/sessions/{sessionId}/turns/{turnId}/trace", "get", await get("/v1/sessions/s1/turns/t1/trace")],
      ["/v1/sessions/{sessionId}/turns/{turnId}/trace", "get", await get("/v1/sessions/s1/turns/t9/trace")],
      ["/v1/files/{fileId}", "get", await get("/v1/files/file_1")],
      ["/healthz", "get", await app.request("/healthz")],
      ["/readyz", "get", await app.request("/readyz")],
      ["/readyz", "get", await setup({ ready: false }).app.request("/readyz")],
    ];
    const statuses = [];
    for (const [path, method, response] of cases) {
      const [status, body] = await answer(response);
      statuses.push(status);
      expect(check(path, method, status, body), `${method} ${path} ${status}`).toEqual([]);
    }
    // Successes and failures alike were checked.
    expect(statuses).toEqual([200, 200, 400, 200, 200, 404, 401, 200, 404, 404, 200, 200, 503]);
    // And a body that drifts from its schema is caught.
    expect(
      check("/v1/sessions/{sessionId}", "get", 200, {
        successful: true,
        result: {},
        errors: [],
        warnings: [],
      }),
    ).not.toEqual([]);
  });

  it("describes a background turn's 202 and the turn read back by its id", async () => {
    const { app, post, get, provider } = setup();
    const check = await openApiValidator(app);
    provider.enqueue({ text: "Done alone." });
    const accepted = await post({ sessionId: "s1", turnId: "t1", instruction: "Work", background: true });
    expect(accepted.status).toBe(202);
    expect(check("/v1/agent/execute", "post", 202, await accepted.json())).toEqual([]);
    const readTurn = async () =>
      (await (await get("/v1/sessions/s1/turns/t1")).json()) as { result?: { status?: string } };
    let read = await readTurn();
    for (let reads = 0; read.result?.status !== "completed" && reads < 100; reads++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      read = await readTurn();
    }
    expect(read.result).toMatchObject({ status: "completed", result: { primaryOutputText: "Done alone." } });
    expect(check("/v1/sessions/{sessionId}/turns/{turnId}", "get", 200, read)).toEqual([]);
    const unknown = await get("/v1/sessions/s1/turns/t9");
    expect(unknown.status).toBe(404);
    expect(check("/v1/sessions/{sessionId}/turns/{turnId}", "get", 404, await unknown.json())).toEqual([]);
  });

  it("describes the bodies the workspace routes really answer", async () => {
    const { app, send, get } = setup();
    const check = await openApiValidator(app);
    const documents = [{ path: "src/a.ts", contents: "export const a = 1;" }];
    const cases: Array<[string, string, Response]> = [
      [
        "/v1/workspaces/{workspaceId}/documents",
        "put",
        await send("PUT", "/v1/workspaces/ws/documents", { documents }),
      ],
      ["/v1/workspaces/{workspaceId}/documents", "put", await send("PUT", "/v1/workspaces/ws/documents", {})],
      [
        "/v1/workspaces/{workspaceId}/search",
        "post",
        await send("POST", "/v1/workspaces/ws/search", { query: "a" }),
      ],
      ["/v1/workspaces/{workspaceId}", "get", await get("/v1/workspaces/ws")],
      [
        "/v1/workspaces/{workspaceId}/documents",
        "delete",
        await send("DELETE", "/v1/workspaces/ws/documents", { paths: ["src/a.ts"] }),
      ],
      ["/v1/workspaces/{workspaceId}", "delete", await send("DELETE", "/v1/workspaces/ws", undefined)],
      ["/v1/workspaces/{workspaceId}", "get", await get("/v1/workspaces/ws")],
    ];
    const statuses = [];
    for (const [path, method, response] of cases) {
      const status = response.status;
      statuses.push(status);
      expect(check(path, method, status, await response.json()), `${method} ${path} ${status}`).toEqual([]);
    }
    expect(statuses).toEqual([200, 400, 200, 200, 200, 200, 404]);
  });

  it("holds core's session views to the schemas it publishes for them", () => {
    expectTypeOf<Jsonified<SessionSummary>>().toExtend<z.input<typeof SessionSummarySchema>>();
    expectTypeOf<Jsonified<TurnTrace>>().toExtend<z.input<typeof TurnTraceSchema>>();
  });

  it("lists the events route with its Last-Event-ID header", async () => {
    const { app } = setup();
    const document = (await (await app.request("/openapi.json")).json()) as {
      paths: Record<
        string,
        { get: { description?: string; parameters: Array<{ name: string; in: string }>; responses: object } }
      >;
    };
    const events = document.paths["/v1/sessions/{sessionId}/turns/{turnId}/events"]?.get;
    expect(events?.parameters).toContainEqual(
      expect.objectContaining({ name: "Last-Event-ID", in: "header" }),
    );
    expect(events?.responses).toMatchObject({ "200": { content: { "text/event-stream": {} } } });
    // How a resume ends, and which ids it refuses.
    expect(events?.description).toContain("A resume always ends with the turn's latest `result` event");
    expect(events?.description).toContain("400 VALIDATION_FAILED naming `Last-Event-ID`");
  });

  it("states the Retry-After header of 409 (SESSION_BUSY), 429 (RATE_LIMITED) and 503 (NOT_READY) answers", async () => {
    const { app } = setup();
    const document = (await (await app.request("/openapi.json")).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { headers?: object }> }>>;
    };
    const retryAfter = (path: string, method: string, status: number) =>
      document.paths[path]?.[method]?.responses[String(status)]?.headers;
    for (const [path, method] of [
      ["/v1/agent/execute", "post"],
      ["/v1/sessions/{sessionId}", "get"],
      ["/readyz", "get"],
    ] as const) {
      expect(retryAfter(path, method, 503)).toMatchObject({
        "Retry-After": {
          description: expect.stringContaining("5 s with NOT_READY"),
          schema: { type: "integer" },
        },
      });
    }
    expect(retryAfter("/v1/agent/execute", "post", 409)).toMatchObject({
      "Retry-After": { description: expect.stringContaining("1 s with SESSION_BUSY") },
    });
    expect(retryAfter("/v1/sessions/{sessionId}/turns/{turnId}/events", "get", 429)).toMatchObject({
      "Retry-After": {
        description: expect.stringContaining("`details.retryAfterSeconds` with RATE_LIMITED"),
      },
    });
    expect(retryAfter("/v1/agent/execute", "post", 400)).toBeUndefined();
  });

  it("states the request limits: the body limit, every RequestLimits value, and lengths in the schemas", async () => {
    const { app } = setup({ maxBodyBytes: 123_456 });
    const document = (await (await app.request("/openapi.json")).json()) as {
      paths: Record<string, { post: { description: string; requestBody: Record<string, unknown> } }>;
      components: { schemas: { AgentExecuteRequest: object } };
    };
    const execute = document.paths["/v1/agent/execute"]?.post;
    expect(execute?.requestBody["x-aptix-max-body-bytes"]).toBe(123_456);
    expect(execute?.description).toContain("123456 bytes");
    expect(execute?.requestBody["x-aptix-request-limits"]).toEqual(DEFAULT_REQUEST_LIMITS);
    // JSON Schema states the limits it can: lengths of every string, sizes of every list.
    const request = JSON.stringify(document.components.schemas.AgentExecuteRequest);
    for (const limit of [
      `"maxLength":${DEFAULT_REQUEST_LIMITS.maxInstructionChars}`,
      `"maxItems":${DEFAULT_REQUEST_LIMITS.maxInputArtifacts}`,
      `"maxItems":${DEFAULT_REQUEST_LIMITS.maxToolResults}`,
      `"maxLength":${DEFAULT_REQUEST_LIMITS.maxToolResultChars}`,
      `"mimeType":{"type":"string","maxLength":${FIELD_LENGTH_LIMITS.maxMimeTypeChars}`,
    ]) {
      expect(request).toContain(limit);
    }
  });
});
