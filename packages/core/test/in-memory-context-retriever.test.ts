import type { RagScopeCondition } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import type { FixedContextChunk } from "../src/in-memory/in-memory-context-retriever.js";
import { InMemoryContextRetriever, matchesCondition } from "../src/in-memory/in-memory-context-retriever.js";
import type { RetrievalQuery, RetrievedChunk } from "../src/ports/context-retriever.js";

function chunk(id: string, metadata?: Record<string, string>): FixedContextChunk {
  const base: FixedContextChunk = {
    chunkId: id,
    path: `src/${id}.ts`,
    startLine: 1,
    endLine: 10,
    language: "typescript",
    text: `// ${id}`,
  };
  return metadata === undefined ? base : { ...base, metadata };
}

function query(scope: RagScopeCondition[], limit = 8): RetrievalQuery {
  return {
    principal: "principal-a",
    sessionId: "s-1",
    turnId: "t-1",
    workspaceId: "ws",
    text: "explain",
    scope,
    boost: {},
    limit,
  };
}

/** The chunks a retrieval found (failing the test on any other answer). */
async function found(
  retriever: InMemoryContextRetriever,
  scope: RagScopeCondition[],
): Promise<RetrievedChunk[]> {
  const retrieval = await retriever.retrieve(query(scope));
  if (retrieval.type !== "found") throw new Error(`expected chunks, got ${retrieval.type}`);
  return retrieval.chunks;
}

const chunks: FixedContextChunk[] = [
  chunk("api", { repo: "aptix/api", language: "typescript", kind: "source" }),
  chunk("web", { repo: "aptix/web", language: "typescript", kind: "test" }),
  chunk("tool", { repo: "tools/cli", language: "go" }),
  chunk("bare"),
];

const ids = async (retriever: InMemoryContextRetriever, scope: RagScopeCondition[]) =>
  (await found(retriever, scope)).map((chunk) => chunk.chunkId);

describe("InMemoryContextRetriever", () => {
  const retriever = new InMemoryContextRetriever(chunks);

  it("returns every chunk, in insertion order and scored by it, without metadata, for an empty scope", async () => {
    expect(await ids(retriever, [])).toEqual(["api", "web", "tool", "bare"]);
    expect(await found(retriever, [])).toStrictEqual(
      chunks.map(({ metadata: _metadata, ...chunk }, index) => ({ ...chunk, score: 4 - index })),
    );
  });

  it("answers empty_index when it holds no chunks", async () => {
    expect(await new InMemoryContextRetriever().retrieve(query([]))).toEqual({ type: "empty_index" });
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

  it("caps the result at maxChunks (default 8) and the query's limit, keeping insertion order", async () => {
    const many = Array.from({ length: 12 }, (_, index) => chunk(`c${index}`, { kind: "source" }));
    const byDefault = new InMemoryContextRetriever(many);
    expect(await ids(byDefault, [])).toEqual(many.slice(0, 8).map((c) => c.chunkId));
    const limited = await byDefault.retrieve(query([], 2));
    expect(limited.type === "found" && limited.chunks.map((c) => c.chunkId)).toEqual(["c0", "c1"]);
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
    const [first] = await found(own, []);
    if (first === undefined) throw new Error("expected a chunk");
    first.text = "changed";
    expect((await found(own, [{ key: "kind", operator: "==", values: ["doc"] }]))[0]?.text).toBe("// a");
  });

  it("matchesCondition does not read inherited properties as metadata", () => {
    expect(matchesCondition({}, { key: "constructor", operator: "contains", values: ["function"] })).toBe(
      false,
    );
    expect(matchesCondition({}, { key: "toString", operator: "!=", values: ["x"] })).toBe(true);
  });
});
