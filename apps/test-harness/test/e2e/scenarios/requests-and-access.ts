import { step } from "@aptix/testing-llm-servers";
import { expect, it } from "vitest";
import {
  API_KEYS,
  type Caller,
  expectContinuation,
  expectFailure,
  expectFinal,
  expectOk,
  type HttpAnswer,
  toolContinuation,
  uniqueId,
  userTurn,
} from "../../../src/e2e/index.js";
import type { ScenarioContext } from "./context.js";

const ids = { sessionId: "s-validation", turnId: "t1" };
const artifact = (overrides: Record<string, unknown> = {}) => ({
  relativePath: "src/a.ts",
  fileName: "a.ts",
  contents: "export {};",
  origin: "ide",
  ...overrides,
});
const result = (overrides: Record<string, unknown> = {}) => ({
  toolCallId: "call_1",
  executionMs: 5,
  resultJson: '{"ok":true}',
  ...overrides,
});

/** Each class of invalid request (AGN-034), and the fields the 400 must name. */
const INVALID_REQUESTS: Array<{ name: string; body: unknown; fields: string[]; message: RegExp }> = [
  {
    name: "forbidden field mode",
    body: { ...ids, instruction: "Hi", mode: "review" },
    fields: ["mode"],
    message: /mode/,
  },
  {
    name: "forbidden provider and tool fields",
    body: { ...ids, instruction: "Hi", previousResponseId: "resp_1", toolsJson: "[]" },
    fields: ["previousResponseId", "toolsJson"],
    message: /previousResponseId/,
  },
  {
    name: "unknown field",
    body: { ...ids, instruction: "Hi", temperature: 0.2 },
    fields: ["temperature"],
    message: /temperature/,
  },
  {
    name: "user turn without input",
    body: { ...ids, repo: "aptix" },
    fields: [""],
    message: /instruction, inputArtifacts or clipboardImages/,
  },
  {
    name: "absolute artifact path",
    body: { ...ids, inputArtifacts: [artifact({ relativePath: "/etc/passwd", fileName: "passwd" })] },
    fields: ["inputArtifacts[0].relativePath"],
    message: /inputArtifacts\[0\]\.relativePath/,
  },
  {
    name: "artifact path escaping with ..",
    body: { ...ids, inputArtifacts: [artifact({ relativePath: "src/../../secret.txt" })] },
    fields: ["inputArtifacts[0].relativePath"],
    message: /inputArtifacts\[0\]\.relativePath/,
  },
  {
    name: "bad base64",
    body: { ...ids, inputArtifacts: [artifact({ contents: "not base64!", encoding: "base64" })] },
    fields: ["inputArtifacts[0].contents"],
    message: /inputArtifacts\[0\]\.contents/,
  },
  {
    name: "mixed scenario (tool results plus an instruction)",
    body: { ...ids, toolResults: [result()], instruction: "and also this" },
    fields: ["instruction"],
    message: /instruction/,
  },
  {
    name: "resultJson that is not JSON text",
    body: { ...ids, toolResults: [result({ resultJson: "{lines: [a, b]}" })] },
    fields: ["toolResults[0].resultJson"],
    message: /toolResults\[0\]\.resultJson/,
  },
];

/** Replaces each id with a placeholder, so two answers can be compared modulo the ids they name. */
function withoutIds(answer: HttpAnswer<unknown>, idsToHide: Record<string, string>): unknown {
  let text = JSON.stringify(answer.body);
  for (const [placeholder, id] of Object.entries(idsToHide)) text = text.split(id).join(`<${placeholder}>`);
  return { status: answer.status, body: JSON.parse(text) };
}

/** Scenarios 5 and 6: request validation, principals' isolation, authentication. */
export function requestAndAccessScenarios(ctx: ScenarioContext): void {
  it.each(INVALID_REQUESTS)(
    "answers 400 VALIDATION_FAILED naming the field: $name",
    async ({ body, fields, message }) => {
      const sessionId = uniqueId("invalid");
      const answer = await ctx.service.post({ ...(body as object), sessionId });
      const error = expectFailure(answer, 400, "VALIDATION_FAILED");
      const named = ((error.details?.fields ?? []) as Array<{ path: string; message: string }>).map(
        (field) => field.path,
      );
      expect(named).toEqual(fields);
      expect(error.message).toMatch(message);
      // Nothing reached the provider, and no session was made.
      expect(ctx.harness.responseRequests()).toHaveLength(0);
      expectFailure(await ctx.service.session(sessionId), 404, "SESSION_NOT_FOUND");
    },
  );

  it("answers 400 VALIDATION_FAILED for a body that is not JSON, and 415 for one that is not application/json", async () => {
    const notJson = await fetch(`${ctx.service.url}/v1/agent/execute`, {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEYS.alice}`, "content-type": "application/json" },
      body: '{"sessionId": "s1",',
    });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({
      successful: false,
      errors: [{ code: "VALIDATION_FAILED" }],
    });

    const text = await fetch(`${ctx.service.url}/v1/agent/execute`, {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEYS.alice}`, "content-type": "text/plain" },
      body: JSON.stringify(userTurn("s1", "t1", "Hi")),
    });
    expect(text.status).toBe(415);
    expect(await text.json()).toMatchObject({
      successful: false,
      errors: [{ code: "UNSUPPORTED_MEDIA_TYPE" }],
    });
  });

  it("answers another principal's session, trace and continuation exactly like unknown ids (404)", async () => {
    const sessionId = uniqueId("alice");
    ctx.harness.script(
      step.functionCalls({ name: "read_file", arguments: { path: "secret.ts" }, callId: "call_secret" }),
      step.text("Alice's answer."),
      step.text("Bob's own answer."),
    );
    expectContinuation(await ctx.service.post(userTurn(sessionId, "t1", "Read secret.ts"), "alice"));
    const unknownSession = uniqueId("nobody");
    const hidden = (answer: HttpAnswer<unknown>, id: string, turnId = "t1") =>
      withoutIds(answer, { sessionId: id, turnId });

    // GET of the session.
    const foreignSession = await ctx.service.session(sessionId, "bob");
    const unknown = await ctx.service.session(unknownSession, "bob");
    expectFailure(foreignSession, 404, "SESSION_NOT_FOUND");
    expect(hidden(foreignSession, sessionId)).toEqual(hidden(unknown, unknownSession));

    // GET of a turn's trace.
    const foreignTrace = await ctx.service.trace(sessionId, "t1", "bob");
    const unknownTrace = await ctx.service.trace(unknownSession, "t1", "bob");
    expectFailure(foreignTrace, 404, "SESSION_NOT_FOUND");
    expect(hidden(foreignTrace, sessionId)).toEqual(hidden(unknownTrace, unknownSession));

    // A continuation of alice's awaiting turn.
    const results = [{ toolCallId: "call_secret", resultJson: '"stolen"' }];
    const foreignContinuation = await ctx.service.post(toolContinuation(sessionId, "t1", results), "bob");
    const unknownContinuation = await ctx.service.post(
      toolContinuation(unknownSession, "t1", results),
      "bob",
    );
    expectFailure(foreignContinuation, 404, "SESSION_NOT_FOUND");
    expect(hidden(foreignContinuation, sessionId)).toEqual(hidden(unknownContinuation, unknownSession));
    expect(ctx.harness.responseRequests()).toHaveLength(1);

    // Alice's turn is untouched by all that.
    const mine = await ctx.service.post(
      toolContinuation(sessionId, "t1", [{ toolCallId: "call_secret", resultJson: '"contents"' }]),
      "alice",
    );
    expect(expectFinal(mine).primaryOutputText).toBe("Alice's answer.");

    // The same ids from bob name a new session of bob's, which starts fresh.
    const bobs = expectFinal(await ctx.service.post(userTurn(sessionId, "t1", "Hello from bob"), "bob"));
    expect(bobs.primaryOutputText).toBe("Bob's own answer.");
    const bobRequest = ctx.harness.responseRequests()[2]?.body as Record<string, unknown>;
    expect(bobRequest.previous_response_id).toBeUndefined();
    expect((bobRequest.input as Array<{ role: string }>).map((item) => item.role)).toEqual([
      "system",
      "user",
    ]);
    const bobSummary = expectOk(await ctx.service.session(sessionId, "bob"));
    const aliceSummary = expectOk(await ctx.service.session(sessionId, "alice"));
    expect(bobSummary.turns.map((turn) => turn.status)).toEqual(["completed"]);
    expect(aliceSummary.turns.map((turn) => turn.status)).toEqual(["completed"]);
    // Two unrelated turns named t1: alice's took two model calls, bob's one.
    const bobTrace = expectOk(await ctx.service.trace(sessionId, "t1", "bob"));
    const aliceTrace = expectOk(await ctx.service.trace(sessionId, "t1", "alice"));
    expect([aliceTrace.llmCalls.length, bobTrace.llmCalls.length]).toEqual([2, 1]);
  });

  it.each<[string, Caller | "wrong-key", string, string]>([
    ["POST execute without a key", "anonymous", "POST", "/v1/agent/execute"],
    ["POST execute with a wrong key", "wrong-key", "POST", "/v1/agent/execute"],
    ["GET a session without a key", "anonymous", "GET", "/v1/sessions/s1"],
    ["GET a trace without a key", "anonymous", "GET", "/v1/sessions/s1/turns/t1/trace"],
  ])("answers 401 UNAUTHORIZED: %s", async (_name, as, method, path) => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (as === "wrong-key") headers.authorization = "Bearer not-a-key-of-this-service";
    const response = await fetch(`${ctx.service.url}${path}`, {
      method,
      headers,
      ...(method === "POST" ? { body: JSON.stringify(userTurn("s1", "t1", "Hi")) } : {}),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(await response.json()).toMatchObject({ successful: false, errors: [{ code: "UNAUTHORIZED" }] });
    expect(ctx.harness.responseRequests()).toHaveLength(0);
  });

  it("answers health checks without a key", async () => {
    const live = await ctx.service.get("/healthz", "anonymous");
    const ready = await ctx.service.get("/readyz", "anonymous");
    expect([live.status, live.body]).toEqual([
      200,
      { successful: true, result: { status: "live" }, errors: [], warnings: [] },
    ]);
    expect([ready.status, ready.body]).toEqual([
      200,
      { successful: true, result: { status: "ready" }, errors: [], warnings: [] },
    ]);
  });
}
