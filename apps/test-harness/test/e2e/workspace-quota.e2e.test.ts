import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectFailure, expectOk, startTestService, type TestService } from "../../src/e2e/index.js";

/** Room for one 60-byte document, not two. */
const QUOTA_BYTES = 100;
const sixty = (path: string) => ({ path, contents: `// ${"x".repeat(56)}\n` });

describe("APTIX_QUOTA_WORKSPACE_BYTES", () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService({
      store: "postgres",
      env: { APTIX_QUOTA_WORKSPACE_BYTES: String(QUOTA_BYTES) },
    });
  });

  afterAll(async () => {
    await service?.close();
  });

  const push = (workspaceId: string, documents: unknown[], as: "alice" | "bob" = "alice", replace = false) =>
    service.send("PUT", `/v1/workspaces/${workspaceId}/documents`, { documents, replace }, as);

  it("refuses a push past the quota whole with 413 QUOTA_EXCEEDED naming it, storing nothing", async () => {
    expectOk(await push("first", [sixty("a.ts")]));
    // Counted across the principal's workspaces: a second workspace would take 120 bytes.
    const refused = await push("second", [sixty("b.ts"), { path: "c.ts", contents: "c" }]);
    const error = expectFailure(refused, 413, "QUOTA_EXCEEDED");
    expect(error.details).toEqual({
      quota: "APTIX_QUOTA_WORKSPACE_BYTES",
      quotaBytes: QUOTA_BYTES,
      usedBytes: 60,
      addedBytes: 61,
    });
    expect(error.message).toContain("APTIX_QUOTA_WORKSPACE_BYTES");
    expectFailure(await service.get("/v1/workspaces/second"), 404, "WORKSPACE_NOT_FOUND");
    expect(expectOk(await service.get<{ documents: number }>("/v1/workspaces/first")).documents).toBe(1);

    // Another principal has a quota of its own; replacing a workspace's documents frees what they took.
    expectOk(await push("second", [sixty("b.ts")], "bob"));
    expect(expectOk(await push("first", [sixty("b.ts")], "alice", true))).toMatchObject({
      upserted: 1,
      deleted: 1,
    });
  });
});
