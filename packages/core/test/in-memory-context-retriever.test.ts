import type { RagScopeCondition } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import { InMemoryContextRetriever, matchesCondition } from "../src/in-memory/in-memory-context-retriever.js";
import type { RetrievalQuery } from "../src/ports/context-retriever.js";
import type { RagChunk } from "../src/records/rag-chunk.js";

function chunk(id: string, metadata?: Record<string, string>): RagChunk {
  const base: RagChunk = {
    id,
    path: `src/${id}.ts`,
    startLine: 1,
    endLine: 10,
    language: "typescript",
    content: `// ${id}`,
  };
  return metadata === undefined ? base : { ...base, metadata };
}

function query(scope: RagScopeCondition[]): RetrievalQuery {
  return {
    principal: "principal-a",
    sessionId: "session-1",
    request: { sessionId: "session-1", turnId: "turn-1", instruction: "explain", ragScope: scope },
    scope,
  };
}

const chunks: RagChunk[] = [
  chunk("api", { repo: "aptix/api", language: "typescript", kind: "source" }),
  chunk("web", { repo: "aptix/web", language: "typescript", kind: "test" }),
  chunk("tool", { repo: "tools/cli", language: "go" }),
  chunk("bare"),
];

const ids = async (retriever: InMemoryContextRetriever, scope: RagScopeCondition[]) =>
  (await retriever.retrieve(query(scope))).map((found) => found.id);

describe("InMemoryContextRetriever", () => {
  const retriever = new InMemoryContextRetriever(chunks);

  it("returns every chunk, in insertion order, for an empty scope", async () => {
    expect(await ids(retriever, [])).toEqual(["api", "web", "tool", "bare"]);
    expect(await retriever.retrieve(query([]))).toStrictEqual(chunks);
  });

  it("==: the value is one of the values; a missing key never matches", async () => {
    expect(await ids(retriever, [{ key: "language", operator: "==", values: ["typescript"] }])).toEqual([
      "api",
      "web",
    ]);
    expect(await ids(retriever, [{ key: "language", operator: "==", values: ["go", "rust"] }])).toEqual([
      "tool",
    ]);
    expect(await ids(retriever, [{ key: "repo", operator: "==", values: ["aptix"] }])).toEqual([]);
  });

  it("!=: the value is none of the values; a missing key matches", async () => {
    expect(await ids(retriever, [{ key: "kind", operator: "!=", values: ["test"] }])).toEqual([
      "api",
      "tool",
      "bare",
    ]);
    expect(await ids(retriever, [{ key: "language", operator: "!=", values: ["typescript", "go"] }])).toEqual(
      ["bare"],
    );
  });

  it("contains: the value contains one of the values; a missing key never matches", async () => {
    expect(await ids(retriever, [{ key: "repo", operator: "contains", values: ["aptix/"] }])).toEqual([
      "api",
      "web",
    ]);
    expect(await ids(retriever, [{ key: "repo", operator: "contains", values: ["cli", "web"] }])).toEqual([
      "web",
      "tool",
    ]);
    expect(await ids(retriever, [{ key: "repo", operator: "contains", values: ["APTIX"] }])).toEqual([]);
  });

  it("does_not_contain: the value contains none of the values; a missing key matches", async () => {
    expect(await ids(retriever, [{ key: "repo", operator: "does_not_contain", values: ["aptix"] }])).toEqual([
      "tool",
      "bare",
    ]);
    expect(
      await ids(retriever, [{ key: "repo", operator: "does_not_contain", values: ["api", "cli"] }]),
    ).toEqual(["web", "bare"]);
  });

  it("ANDs the conditions", async () => {
    expect(
      await ids(retriever, [
        { key: "language", operator: "==", values: ["typescript"] },
        { key: "kind", operator: "!=", values: ["test"] },
      ]),
    ).toEqual(["api"]);
    expect(
      await ids(retriever, [
        { key: "repo", operator: "contains", values: ["aptix"] },
        { key: "repo", operator: "does_not_contain", values: ["aptix"] },
      ]),
    ).toEqual([]);
  });

  it("caps the result at maxChunks (default 8), keeping insertion order", async () => {
    const many = Array.from({ length: 12 }, (_, index) => chunk(`c${index}`, { kind: "source" }));
    const byDefault = new InMemoryContextRetriever(many);
    expect(await ids(byDefault, [])).toEqual(many.slice(0, 8).map((c) => c.id));
    const capped = new InMemoryContextRetriever(many, { maxChunks: 3 });
    expect(await ids(capped, [{ key: "kind", operator: "==", values: ["source"] }])).toEqual([
      "c0",
      "c1",
      "c2",
    ]);
    expect(await ids(new InMemoryContextRetriever(many, { maxChunks: 0 }), [])).toEqual([]);
    expect(() => new InMemoryContextRetriever(many, { maxChunks: -1 })).toThrow(RangeError);
    expect(() => new InMemoryContextRetriever(many, { maxChunks: 1.5 })).toThrow(RangeError);
  });

  it("add() appends after the chunks given to the constructor", async () => {
    const growing = new InMemoryContextRetriever([chunk("first", { kind: "doc" })]);
    growing.add(chunk("second", { kind: "doc" }));
    expect(await ids(growing, [{ key: "kind", operator: "==", values: ["doc"] }])).toEqual([
      "first",
      "second",
    ]);
  });

  it("hands out copies of its chunks", async () => {
    const own = new InMemoryContextRetriever([chunk("a", { kind: "doc" })]);
    const [first] = await own.retrieve(query([]));
    if (first?.metadata === undefined) throw new Error("expected a chunk with metadata");
    first.metadata.kind = "changed";
    first.content = "changed";
    expect(await own.retrieve(query([]))).toStrictEqual([chunk("a", { kind: "doc" })]);
  });

  it("matchesCondition does not read inherited properties as metadata", () => {
    expect(matchesCondition({}, { key: "constructor", operator: "contains", values: ["function"] })).toBe(
      false,
    );
    expect(matchesCondition({}, { key: "toString", operator: "!=", values: ["x"] })).toBe(true);
  });
});
