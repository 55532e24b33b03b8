import { describe, expect, it } from "vitest";
import {
  RetrievalTraceSchema,
  validateDeleteWorkspaceDocumentsRequest,
  validatePutWorkspaceDocumentsRequest,
  validateWorkspaceId,
  validateWorkspaceSearchRequest,
  WORKSPACE_LIMITS,
} from "../src/index.js";

/** The failing fields of a refused body, by path. */
function fieldsOf(result: { successful: boolean; errors?: Array<{ details?: Record<string, unknown> }> }) {
  if (result.successful) throw new Error("expected a refusal");
  return (result.errors?.[0]?.details?.fields as Array<{ path: string; message: string }>) ?? [];
}

describe("workspace requests (docs/http-api.md, Workspaces)", () => {
  it("accepts documents with their optional attributes, and replace", () => {
    const body = {
      documents: [
        { path: "src/a.ts", contents: "export {}", language: "typescript", repo: "shop", tags: ["core"] },
        { path: "docs/readme.md", contents: "", metadata: { team: "web" } },
      ],
      replace: true,
    };
    expect(validatePutWorkspaceDocumentsRequest(body)).toEqual({
      successful: true,
      result: body,
      errors: [],
      warnings: [],
    });
  });

  it("holds document paths to the artifact path rules, and refuses repeats", () => {
    const fields = fieldsOf(
      validatePutWorkspaceDocumentsRequest({
        documents: [
          { path: "/abs.ts", contents: "" },
          { path: "a/../b.ts", contents: "" },
          { path: "C:/x.ts", contents: "" },
          { path: "ok.ts", contents: "" },
          { path: "ok.ts", contents: "" },
        ],
      }),
    );
    expect(fields).toEqual([
      { path: "documents[0].path", message: "must be relative to the workspace root, not start with '/'" },
      { path: "documents[1].path", message: "must not contain a '..' segment" },
      { path: "documents[2].path", message: "must not start with a drive letter" },
      { path: "documents[4].path", message: "must be unique: entry 3 has the same path" },
    ]);
  });

  it("bounds a document at 1 MiB of UTF-8 and a request at 1,000 documents, past which it is 413", () => {
    const { maxDocumentBytes, maxDocumentsPerRequest } = WORKSPACE_LIMITS;
    expect(maxDocumentBytes).toBe(1024 * 1024);
    const atLimit = "é".repeat(maxDocumentBytes / 2);
    expect(
      validatePutWorkspaceDocumentsRequest({ documents: [{ path: "a", contents: atLimit }] }).successful,
    ).toBe(true);
    expect(
      fieldsOf(validatePutWorkspaceDocumentsRequest({ documents: [{ path: "a", contents: `${atLimit}x` }] })),
    ).toEqual([{ path: "documents[0].contents", message: "must be at most 1048576 bytes (UTF-8)" }]);
    const many = Array.from({ length: maxDocumentsPerRequest + 1 }, (_, index) => ({
      path: `f${index}`,
      contents: "",
    }));
    expect(maxDocumentsPerRequest).toBe(1000);
    expect(validatePutWorkspaceDocumentsRequest({ documents: many.slice(1) }).successful).toBe(true);
    const tooMany = validatePutWorkspaceDocumentsRequest({ documents: many });
    expect(tooMany.errors).toEqual([
      {
        code: "PAYLOAD_TOO_LARGE",
        message: "A push holds at most 1000 documents, not 1001: send them in several requests.",
        details: {
          maxDocuments: 1000,
          fields: [{ path: "documents", message: "must hold at most 1000 documents" }],
        },
      },
    ]);
  });

  it("names unknown fields and refuses what is not an object", () => {
    expect(fieldsOf(validatePutWorkspaceDocumentsRequest({ documents: [], mode: "x" }))).toEqual([
      { path: "mode", message: "is not a field of the documents request" },
    ]);
    expect(fieldsOf(validatePutWorkspaceDocumentsRequest([]))).toEqual([
      { path: "", message: "must be a JSON object" },
    ]);
    expect(fieldsOf(validateDeleteWorkspaceDocumentsRequest({ paths: [] }))).toEqual([
      { path: "paths", message: "must name at least one path" },
    ]);
  });

  it("defaults a search's limit to 8, allows at most 50, and checks ragScope as a user turn does", () => {
    expect(validateWorkspaceSearchRequest({ query: "invoice" })).toMatchObject({
      result: { query: "invoice", limit: 8 },
    });
    expect(fieldsOf(validateWorkspaceSearchRequest({ query: "x", limit: 51 }))).toEqual([
      { path: "limit", message: "must be at most 50" },
    ]);
    expect(
      fieldsOf(
        validateWorkspaceSearchRequest({
          query: " ",
          ragScope: [{ key: "repo", operator: "like", values: ["a"] }],
        }),
      ).map((field) => field.path),
    ).toEqual(["query", "ragScope[0].operator"]);
  });

  it("judges a workspace id from the path as the field workspaceId", () => {
    expect(validateWorkspaceId("shop")).toMatchObject({ successful: true, result: "shop" });
    expect(fieldsOf(validateWorkspaceId("w".repeat(257)))).toEqual([
      { path: "workspaceId", message: "must be at most 256 characters" },
    ]);
  });

  it("describes a turn's retrieval for its trace", () => {
    expect(
      RetrievalTraceSchema.safeParse({
        outcome: "included",
        workspaceId: "shop",
        workspaceFrom: "request",
        query: "invoice",
        chunks: [{ id: "ctx_1", chunkId: "chunk_1", path: "a.ts", startLine: 1, endLine: 3, score: 0.5 }],
        previouslyProvided: [],
        skipped: 0,
        tokens: 42,
      }).success,
    ).toBe(true);
  });
});
