import { type ScriptedOpenAI, startScriptedOpenAI, step } from "@aptix/testing-llm-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CREATE_FILE_CATALOG,
  checkAndResetHarness,
  expectFinal,
  expectOk,
  startTestService,
  type TestService,
  uniqueId,
  userTurn,
  writeCatalog,
} from "../../src/e2e/index.js";

/** Room for one 8-byte file, not two. */
const QUOTA_BYTES = 10;

const createFile = (name: string, content: string, callId: string) =>
  step.functionCalls({
    callId,
    name: "create_file",
    arguments: { name, mimeType: "text/plain", content, encoding: null, description: null },
  });

type Body = { input: Array<{ type?: string; call_id?: string; output?: string }> };

describe("APTIX_QUOTA_FILE_BYTES", () => {
  let harness: ScriptedOpenAI;
  let service: TestService;

  beforeAll(async () => {
    harness = await startScriptedOpenAI();
    const config = await writeCatalog(CREATE_FILE_CATALOG);
    service = await startTestService({
      store: "postgres",
      harness,
      env: { APTIX_CONFIG: config, APTIX_QUOTA_FILE_BYTES: String(QUOTA_BYTES) },
    });
  });

  afterAll(async () => {
    await service?.close();
    await harness?.close();
  });

  it("fails a create_file call past the quota with an error output naming it, and the turn goes on", async () => {
    harness.script(
      createFile("a.txt", "12345678", "call_a"),
      createFile("b.txt", "abcdefgh", "call_b"),
      step.text("Kept one of them."),
      createFile("c.txt", "bobsfile", "call_c"),
      step.text("Bob's file."),
    );
    const sessionId = uniqueId("quota");
    const final = expectFinal(await service.post(userTurn(sessionId, "t1", "Make two files")));
    expect(final.primaryOutputText).toBe("Kept one of them.");
    expect(final.files?.map((file) => file.name)).toEqual(["a.txt"]);

    // The model was told why, in the output of its call.
    const third = harness.responseRequests()[2]?.body as Body;
    const refused = third.input.find(
      (item) => item.call_id === "call_b" && item.type === "function_call_output",
    );
    expect(refused?.output).toContain("APTIX_QUOTA_FILE_BYTES");
    const trace = expectOk(await service.trace(sessionId, "t1"));
    expect(trace.status).toBe("completed");
    expect(trace.toolExecutions.map((run) => [run.name, run.errorMessage ?? null])).toEqual([
      ["create_file", null],
      ["create_file", expect.stringContaining("APTIX_QUOTA_FILE_BYTES")],
    ]);

    // Another principal's files are counted apart.
    const bobs = expectFinal(await service.post(userTurn(uniqueId("quota-bob"), "t1", "A file"), "bob"));
    expect(bobs.files?.map((file) => file.name)).toEqual(["c.txt"]);
    checkAndResetHarness(harness);
  });
});
