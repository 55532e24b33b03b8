import type { RagScopeCondition } from "@aptix/contracts";
import {
  codeSearchText,
  type IndexDocumentInput,
  type LexicalSearchInput,
  QuotaExceededError,
  type ScoredChunk,
  type WorkspaceIndex,
  type WorkspaceKey,
} from "@aptix/core";
import { codeQueryTerms, type IndexChunkInput, type ManualClock } from "@aptix/core/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/** What a contract run needs from the index under test, made afresh (over empty data) for every test. */
interface WorkspaceIndexHarness {
  index: WorkspaceIndex;
  /** The clock the index stamps `updatedAt` with. */
  clock: ManualClock;
  close(): Promise<void>;
}

interface WorkspaceIndexContractOptions {
  /** Whether the index under test stores embeddings; the vector search checks run only then. */
  vectors: boolean;
}

const KEY: WorkspaceKey = { principal: "principal-a", workspaceId: "workspace-1" };
const OTHER_PRINCIPAL: WorkspaceKey = { principal: "principal-b", workspaceId: "workspace-1" };
const MODEL = "embedding-test";

type ChunkedDocument = IndexDocumentInput & { chunks: IndexChunkInput[] };

interface DocumentSpec {
  hash?: string;
  language?: string;
  repo?: string | null;
  tags?: string[];
  metadata?: Record<string, string>;
}

/**
 * The behaviour every `WorkspaceIndex` shares (docs/knowledge.md): upserts by content hash, deletes, principal
 * isolation, lexical ranking over code-aware terms, every `ragScope` operator and key, boosts, and (with
 * `options.vectors`) vector search. Ranking is checked by order only, never by score values, which each
 * adapter computes its own way. Call it at the top level of a test file.
 */
export function describeWorkspaceIndexContract(
  name: string,
  makeIndex: () => Promise<WorkspaceIndexHarness>,
  options: WorkspaceIndexContractOptions,
): void {
  describe(`WorkspaceIndex contract: ${name}`, () => {
    let harness: WorkspaceIndexHarness | undefined;
    let index: WorkspaceIndex;
    let clock: ManualClock;
    let nextChunk = 0;

    beforeEach(async () => {
      harness = await makeIndex();
      index = harness.index;
      clock = harness.clock;
    });

    afterEach(async () => {
      await harness?.close();
      harness = undefined;
    });

    /** A document of one chunk per text, each chunk one line, with fresh chunk ids. */
    function doc(path: string, texts: string[], spec: DocumentSpec = {}): ChunkedDocument {
      return {
        path,
        contentHash: spec.hash ?? `hash-of-${texts.join("|")}`,
        language: spec.language ?? "typescript",
        repo: spec.repo === undefined ? null : spec.repo,
        tags: spec.tags ?? [],
        metadata: spec.metadata ?? {},
        chunks: texts.map((text, at) => ({
          chunkId: `chunk-${++nextChunk}`,
          startLine: at + 1,
          endLine: at + 1,
          text,
          searchText: codeSearchText(text),
        })),
      };
    }

    function upsert(documents: IndexDocumentInput[], replace = false, key = KEY) {
      return index.upsertDocuments({ key, documents, replace });
    }

    function search(query: string, input: Partial<Omit<LexicalSearchInput, "terms">> = {}) {
      return index.searchLexical({
        key: input.key ?? KEY,
        terms: codeQueryTerms(query),
        scope: input.scope ?? [],
        boost: input.boost ?? {},
        limit: input.limit ?? 50,
      });
    }

    function paths(chunks: ScoredChunk[] | undefined): string[] | undefined {
      return chunks?.map((chunk) => chunk.path);
    }

    describe("upserting documents", () => {
      it("creates the workspace and reports what it wrote", async () => {
        const first = doc("src/a.ts", ["export const alpha = 1;", "export const beta = 2;"]);
        const second = doc("src/b.ts", ["export const gamma = 3;"]);
        const outcome = await upsert([first, second]);
        expect(outcome).toEqual({
          upserted: 2,
          unchanged: 0,
          deleted: 0,
          chunks: 3,
          insertedChunkIds: expect.any(Array),
          stalePaths: [],
        });
        expect([...outcome.insertedChunkIds].sort()).toEqual(
          [...first.chunks, ...second.chunks].map((chunk) => chunk.chunkId).sort(),
        );
        expect(await index.getWorkspace(KEY)).toStrictEqual({
          ...KEY,
          documents: 2,
          chunks: 3,
          updatedAt: clock.now(),
        });
      });

      it("refuses an upsert past quotaBytes whole, throwing QuotaExceededError; the principal's workspaces count together", async () => {
        const sized = (path: string, sizeBytes: number) => ({
          ...doc(path, [`export const ${path.length};`]),
          sizeBytes,
        });
        const within = (documents: IndexDocumentInput[], key = KEY, replace = false) =>
          index.upsertDocuments({ key, documents, replace, quotaBytes: 100 });
        await within([sized("a.ts", 40), sized("b.ts", 40)]);
        const elsewhere = { ...KEY, workspaceId: "workspace-2" };
        const before = await index.getWorkspace(KEY);
        // 80 stored: 30 more in another workspace of the principal would pass 100. Nothing is written, not even
        // the new workspace or the document that would fit on its own.
        const refused = within([sized("c.ts", 10), sized("d.ts", 20)], elsewhere);
        await expect(refused).rejects.toBeInstanceOf(QuotaExceededError);
        await expect(refused).rejects.toEqual(
          new QuotaExceededError("APTIX_QUOTA_WORKSPACE_BYTES", 80, 30, 100),
        );
        expect(await index.getWorkspace(elsewhere)).toBeUndefined();
        expect(await index.getWorkspace(KEY)).toStrictEqual(before);
        // A document written again counts at its new size, one `replace` deletes not at all.
        await within([sized("a.ts", 60)]);
        expect(await within([sized("c.ts", 60)], KEY, true)).toMatchObject({ upserted: 1, deleted: 2 });
        await within([sized("e.ts", 40)], elsewhere);
        // Another principal has a quota of its own.
        await within([sized("a.ts", 100)], OTHER_PRINCIPAL);
        expect((await index.getWorkspace(OTHER_PRINCIPAL))?.documents).toBe(1);
      });

      it("creates an empty workspace for an upsert of no documents", async () => {
        expect(await upsert([])).toEqual({
          upserted: 0,
          unchanged: 0,
          deleted: 0,
          chunks: 0,
          insertedChunkIds: [],
          stalePaths: [],
        });
        expect(await index.getWorkspace(KEY)).toMatchObject({ documents: 0, chunks: 0 });
        expect(await search("anything")).toEqual([]);
      });

      it("keeps a document without chunks as a document", async () => {
        await upsert([doc("empty.txt", [])]);
        expect(await index.getWorkspace(KEY)).toMatchObject({ documents: 1, chunks: 0 });
      });

      it("gives every attribute of a chunk back as it was upserted", async () => {
        const document = doc("src/store.ts", ["export class SessionStore {}"], {
          hash: "sha-1",
          language: "typescript",
          repo: "aptix",
          tags: ["core", "storage"],
          metadata: { owner: "team-a", kind: "class" },
        });
        await upsert([document]);
        const found = await search("SessionStore");
        expect(found).toHaveLength(1);
        expect({ ...found?.[0], score: 0 }).toStrictEqual({
          chunkId: document.chunks[0]?.chunkId,
          path: "src/store.ts",
          startLine: 1,
          endLine: 1,
          language: "typescript",
          repo: "aptix",
          tags: ["core", "storage"],
          metadata: { owner: "team-a", kind: "class" },
          text: "export class SessionStore {}",
          contentHash: "sha-1",
          score: 0,
        });
      });

      it("writes nothing for a document whose content hash is unchanged", async () => {
        await upsert([doc("src/a.ts", ["const original = 1;"], { hash: "h1" })]);
        clock.advance(60_000);
        const again = await upsert([doc("src/a.ts", ["const replacement = 2;"], { hash: "h1" })]);
        expect(again).toEqual({
          upserted: 0,
          unchanged: 1,
          deleted: 0,
          chunks: 1,
          insertedChunkIds: [],
          stalePaths: [],
        });
        expect(paths(await search("original"))).toEqual(["src/a.ts"]);
        expect(await search("replacement")).toEqual([]);
        expect((await index.getWorkspace(KEY))?.updatedAt).toStrictEqual(
          new Date(clock.now().getTime() - 60_000),
        );
      });

      it("replaces a document's chunks when its content hash changed", async () => {
        await upsert([doc("src/a.ts", ["const original = 1;", "const kept = 2;"], { hash: "h1" })]);
        clock.advance(60_000);
        const changed = doc("src/a.ts", ["const replacement = 2;"], { hash: "h2", tags: ["new"] });
        const outcome = await upsert([changed]);
        expect(outcome).toEqual({
          upserted: 1,
          unchanged: 0,
          deleted: 0,
          chunks: 1,
          insertedChunkIds: [changed.chunks[0]?.chunkId],
          stalePaths: [],
        });
        expect(await search("original kept")).toEqual([]);
        const found = await search("replacement");
        expect(found?.map((chunk) => [chunk.path, chunk.contentHash, chunk.tags])).toEqual([
          ["src/a.ts", "h2", ["new"]],
        ]);
        expect((await index.getWorkspace(KEY))?.updatedAt).toStrictEqual(clock.now());
      });

      describe("documents given without chunks (the caller read their hash as stored)", () => {
        /** `document` as a caller that believes its hash stored sends it: without chunks. */
        function unchunked({ chunks: _, ...document }: ChunkedDocument): IndexDocumentInput {
          return document;
        }

        it("answers the stored hashes of the paths asked for, none for an unknown workspace", async () => {
          expect(await index.documentHashes(KEY, ["a.ts"])).toEqual(new Map());
          await upsert([doc("a.ts", ["alpha"], { hash: "h1" }), doc("b.ts", ["beta"], { hash: "h2" })]);
          expect(await index.documentHashes(KEY, ["b.ts", "missing.ts", "a.ts"])).toEqual(
            new Map([
              ["a.ts", "h1"],
              ["b.ts", "h2"],
            ]),
          );
          expect(await index.documentHashes(KEY, [])).toEqual(new Map());
          expect(await index.documentHashes(OTHER_PRINCIPAL, ["a.ts"])).toEqual(new Map());
        });

        it("counts one whose stored hash matches as unchanged and writes nothing", async () => {
          await upsert([doc("a.ts", ["alpha"], { hash: "h1" })]);
          clock.advance(60_000);
          const again = await upsert([unchunked(doc("a.ts", [], { hash: "h1" }))]);
          expect(again).toEqual({
            upserted: 0,
            unchanged: 1,
            deleted: 0,
            chunks: 1,
            insertedChunkIds: [],
            stalePaths: [],
          });
          expect(paths(await search("alpha"))).toEqual(["a.ts"]);
          expect((await index.getWorkspace(KEY))?.updatedAt).toStrictEqual(
            new Date(clock.now().getTime() - 60_000),
          );
        });

        it("answers one whose stored hash changed, or that is gone, as stale and writes nothing for it", async () => {
          await upsert([doc("a.ts", ["alpha"], { hash: "h2" }), doc("b.ts", ["beta"], { hash: "h3" })]);
          clock.advance(60_000);
          const fresh = doc("c.ts", ["gamma"], { hash: "h4" });
          const outcome = await upsert([
            unchunked(doc("a.ts", [], { hash: "h1" })),
            unchunked(doc("gone.ts", [], { hash: "h5" })),
            fresh,
          ]);
          expect(outcome).toEqual({
            upserted: 1,
            unchanged: 0,
            deleted: 0,
            chunks: 3,
            insertedChunkIds: [fresh.chunks[0]?.chunkId],
            stalePaths: ["a.ts", "gone.ts"],
          });
          expect(await index.documentHashes(KEY, ["a.ts", "gone.ts"])).toEqual(new Map([["a.ts", "h2"]]));
          expect(paths(await search("alpha"))).toEqual(["a.ts"]);
          expect(await index.getWorkspace(KEY)).toMatchObject({ documents: 3, chunks: 3 });
        });

        it("keeps them when replacing the set, stale or not", async () => {
          await upsert([
            doc("a.ts", ["alpha"], { hash: "h1" }),
            doc("b.ts", ["beta"], { hash: "h2" }),
            doc("c.ts", ["gamma"], { hash: "h3" }),
          ]);
          const outcome = await upsert(
            [unchunked(doc("a.ts", [], { hash: "h1" })), unchunked(doc("b.ts", [], { hash: "changed" }))],
            true,
          );
          expect(outcome).toMatchObject({
            upserted: 0,
            unchanged: 1,
            deleted: 1,
            chunks: 2,
            stalePaths: ["b.ts"],
          });
          expect(paths(await search("alpha beta gamma"))?.sort()).toEqual(["a.ts", "b.ts"]);
        });
      });

      it("writes a document of hundreds of chunks whole, weighing the terms of every one", async () => {
        // Enough chunks, and one long enough, that an adapter writing in batches needs several.
        const long = `needle ${"x".repeat(300_000)}`;
        const texts = Array.from({ length: 260 }, (_, at) =>
          [
            `filler${at}`,
            at < 150 ? "alpha" : "",
            at >= 200 ? "beta" : "",
            at < 60 ? "gamma" : "",
            at >= 110 ? "delta" : "",
          ].join(" "),
        );
        const big = doc("big.ts", [...texts, long]);
        const outcome = await upsert([
          big,
          doc("a.ts", ["alpha"]),
          doc("b.ts", ["beta"]),
          doc("c.ts", ["gamma"]),
          doc("d.ts", ["delta"]),
        ]);
        expect(outcome).toMatchObject({ upserted: 5, chunks: 265 });
        expect(outcome.insertedChunkIds).toHaveLength(265);
        expect((await search("needle"))?.map((chunk) => chunk.text)).toEqual([long]);
        // Beta and gamma are in 61 chunks each, alpha and delta in 151, wherever a batch would end: the rarer
        // term weighs more only if every chunk's terms were counted.
        const small = (found: ScoredChunk[] | undefined) => paths(found)?.filter((path) => path !== "big.ts");
        expect(small(await search("alpha beta", { limit: 300 }))).toEqual(["b.ts", "a.ts"]);
        expect(small(await search("gamma delta", { limit: 300 }))).toEqual(["c.ts", "d.ts"]);
      });

      it("keeps the documents not named unless asked to replace the set", async () => {
        await upsert([doc("a.ts", ["alpha"]), doc("b.ts", ["beta"]), doc("c.ts", ["gamma"])]);
        expect(await upsert([doc("d.ts", ["delta"])])).toMatchObject({ upserted: 1, deleted: 0, chunks: 4 });
        const replaced = await upsert([doc("a.ts", ["alpha"]), doc("e.ts", ["epsilon"])], true);
        expect(replaced).toMatchObject({ upserted: 1, unchanged: 1, deleted: 3, chunks: 2 });
        expect(await index.getWorkspace(KEY)).toMatchObject({ documents: 2, chunks: 2 });
        expect(await search("beta gamma delta")).toEqual([]);
        expect(paths(await search("alpha epsilon"))?.sort()).toEqual(["a.ts", "e.ts"]);
      });

      it("empties the workspace when replacing with no documents", async () => {
        await upsert([doc("a.ts", ["alpha"]), doc("b.ts", ["beta"])]);
        expect(await upsert([], true)).toMatchObject({ deleted: 2, chunks: 0 });
        expect(await index.getWorkspace(KEY)).toMatchObject({ documents: 0, chunks: 0 });
      });

      it("refuses a path given twice in one call, naming it, and writes nothing", async () => {
        await expect(upsert([doc("a.ts", ["alpha"]), doc("a.ts", ["beta"])])).rejects.toThrow(/"a\.ts"/);
        expect(await index.getWorkspace(KEY)).toBeUndefined();

        await upsert([doc("b.ts", ["beta"], { hash: "h1" })]);
        await expect(
          upsert(
            [doc("b.ts", ["gamma"], { hash: "h2" }), doc("c.ts", ["delta"]), doc("c.ts", ["delta"])],
            true,
          ),
        ).rejects.toThrow(/"c\.ts"/);
        expect(await index.getWorkspace(KEY)).toMatchObject({ documents: 1, chunks: 1 });
        expect(paths(await search("beta"))).toEqual(["b.ts"]);
      });
    });

    describe("deleting documents", () => {
      it("deletes the named documents with their chunks and answers how many there were", async () => {
        await upsert([doc("a.ts", ["alpha", "alpha two"]), doc("b.ts", ["beta"]), doc("c.ts", ["gamma"])]);
        clock.advance(1_000);
        expect(await index.deleteDocuments(KEY, ["a.ts", "c.ts", "missing.ts"])).toBe(2);
        expect(await index.getWorkspace(KEY)).toStrictEqual({
          ...KEY,
          documents: 1,
          chunks: 1,
          updatedAt: clock.now(),
        });
        expect(await search("alpha gamma")).toEqual([]);
        expect(paths(await search("beta"))).toEqual(["b.ts"]);
      });

      it("answers 0 when none of the paths is there", async () => {
        await upsert([doc("a.ts", ["alpha"])]);
        expect(await index.deleteDocuments(KEY, ["b.ts"])).toBe(0);
        expect(await index.deleteDocuments(KEY, [])).toBe(0);
        expect(await index.getWorkspace(KEY)).toMatchObject({ documents: 1 });
      });

      it("answers undefined for an unknown workspace", async () => {
        expect(await index.deleteDocuments(KEY, ["a.ts"])).toBeUndefined();
      });
    });

    describe("workspaces", () => {
      it("answers undefined for an unknown workspace", async () => {
        expect(await index.getWorkspace(KEY)).toBeUndefined();
        expect(await search("anything")).toBeUndefined();
      });

      it("deletes a workspace with everything in it", async () => {
        await upsert([doc("a.ts", ["alpha"])]);
        expect(await index.deleteWorkspace(KEY)).toBe(true);
        expect(await index.getWorkspace(KEY)).toBeUndefined();
        expect(await search("alpha")).toBeUndefined();
        expect(await index.deleteWorkspace(KEY)).toBe(false);

        expect(await upsert([doc("b.ts", ["beta"])])).toMatchObject({ upserted: 1, chunks: 1 });
        expect(paths(await search("alpha beta"))).toEqual(["b.ts"]);
      });

      it("keeps the workspaces of one principal apart", async () => {
        const second: WorkspaceKey = { ...KEY, workspaceId: "workspace-2" };
        await upsert([doc("a.ts", ["alpha"])]);
        await upsert([doc("a.ts", ["alpha beta"])], false, second);
        expect(paths(await search("beta"))).toEqual([]);
        expect(paths(await search("beta", { key: second }))).toEqual(["a.ts"]);
        await index.deleteWorkspace(second);
        expect(await index.getWorkspace(KEY)).toMatchObject({ documents: 1, chunks: 1 });
      });
    });

    describe("principals", () => {
      it("treats another principal's workspace as unknown", async () => {
        const document = doc("a.ts", ["alpha"]);
        await upsert([document]);
        expect(await index.getWorkspace(OTHER_PRINCIPAL)).toBeUndefined();
        expect(await search("alpha", { key: OTHER_PRINCIPAL })).toBeUndefined();
        expect(await index.deleteDocuments(OTHER_PRINCIPAL, ["a.ts"])).toBeUndefined();
        expect(await index.deleteWorkspace(OTHER_PRINCIPAL)).toBe(false);
        expect(await index.getWorkspace(KEY)).toMatchObject({ documents: 1, chunks: 1 });
      });

      it("keeps two principals' workspaces of the same id apart", async () => {
        await upsert([doc("a.ts", ["alpha"], { hash: "h" })]);
        const theirs = await upsert([doc("a.ts", ["beta"], { hash: "h" })], false, OTHER_PRINCIPAL);
        expect(theirs).toMatchObject({ upserted: 1, unchanged: 0 });
        expect(paths(await search("beta"))).toEqual([]);
        expect(paths(await search("beta", { key: OTHER_PRINCIPAL }))).toEqual(["a.ts"]);
        await upsert([], true, OTHER_PRINCIPAL);
        expect(paths(await search("alpha"))).toEqual(["a.ts"]);
      });
    });

    describe("lexical ranking", () => {
      it("finds a chunk by a part of an identifier in it", async () => {
        await upsert([
          doc("src/users.ts", ["export function getUserName(id: string) {}"]),
          doc("src/orders.ts", ["export function listOrders() {}"]),
        ]);
        expect(paths(await search("user"))).toEqual(["src/users.ts"]);
        expect(paths(await search("name of the user"))).toEqual(["src/users.ts"]);
        expect(paths(await search("max_retry_count"))).toEqual([]);
      });

      it("finds identifiers written with underscores, dots and slashes by their parts", async () => {
        await upsert([doc("a.py", ["MAX_RETRY_COUNT = config.http_client/timeout"], { language: "python" })]);
        expect(paths(await search("retry"))).toEqual(["a.py"]);
        expect(paths(await search("client timeout"))).toEqual(["a.py"]);
        expect(paths(await search("maxRetryCount"))).toEqual(["a.py"]);
      });

      it("ranks the chunk naming the whole identifier above one sharing a part of it", async () => {
        await upsert([
          doc("src/a.ts", ["const name = user.displayName;"]),
          doc("src/b.ts", ["function getUserName() {}"]),
        ]);
        expect(paths(await search("getUserName"))).toEqual(["src/b.ts", "src/a.ts"]);
      });

      it("ranks a chunk matching more of the query's terms first", async () => {
        await upsert([
          doc("a.ts", ["lease expiry handling"]),
          doc("b.ts", ["session lease claim and expiry"]),
          doc("c.ts", ["session handling"]),
        ]);
        expect(paths(await search("claim the session lease before expiry"))?.[0]).toBe("b.ts");
      });

      it("ranks a chunk holding a rare term above one holding a common term as often", async () => {
        await upsert([
          doc("a.ts", ["request handler"]),
          doc("b.ts", ["request retry"]),
          doc("c.ts", ["request client"]),
          doc("d.ts", ["request options"]),
        ]);
        expect(
          paths(await search("request retry handler"))
            ?.slice(0, 2)
            .sort(),
        ).toEqual(["a.ts", "b.ts"]);
        expect(paths(await search("retry request"))?.[0]).toBe("b.ts");
      });

      it("counts only the chunks still there when weighing terms", async () => {
        await upsert([
          doc("keep.ts", ["alpha beta"]),
          doc("gone-1.ts", ["beta one"]),
          doc("gone-2.ts", ["beta two"]),
          doc("other.ts", ["gamma alpha"]),
        ]);
        const before = paths(await search("alpha beta")) ?? [];
        // Beta is in three chunks, alpha in two: alpha weighs more.
        expect(before.indexOf("other.ts")).toBeLessThan(before.indexOf("gone-1.ts"));
        expect(before.indexOf("other.ts")).toBeLessThan(before.indexOf("gone-2.ts"));

        await index.deleteDocuments(KEY, ["gone-1.ts", "gone-2.ts"]);
        await upsert([
          doc("more-1.ts", ["alpha three"]),
          doc("more-2.ts", ["alpha four"]),
          doc("beta.ts", ["beta five"]),
        ]);
        const after = paths(await search("alpha beta")) ?? [];
        // Now alpha is in four chunks, beta in two: beta weighs more.
        expect(after.indexOf("beta.ts")).toBeLessThan(after.indexOf("other.ts"));
        expect(after.indexOf("beta.ts")).toBeLessThan(after.indexOf("more-1.ts"));
      });

      it("finds a chunk by the terms of its path", async () => {
        await upsert([
          doc("src/billing/invoice-renderer.ts", ["export function render() {}"]),
          doc("src/other.ts", ["export function render() {}"]),
        ]);
        expect(paths(await search("invoice"))).toEqual(["src/billing/invoice-renderer.ts"]);
        expect(paths(await search("render invoice"))?.[0]).toBe("src/billing/invoice-renderer.ts");
      });

      it("answers the best chunks first with positive scores, at most `limit`", async () => {
        await upsert([doc("a.ts", ["token", "token token token", "token token", "other"])]);
        const found = (await search("token", { limit: 2 })) ?? [];
        expect(found.map((chunk) => chunk.startLine)).toEqual([2, 3]);
        expect(found.every((chunk) => chunk.score > 0)).toBe(true);
        expect(found[0]?.score).toBeGreaterThanOrEqual(found[1]?.score ?? Number.POSITIVE_INFINITY);
      });

      it("answers no chunks when no term matches or there are no terms", async () => {
        await upsert([doc("a.ts", ["alpha"])]);
        expect(await search("omega")).toEqual([]);
        expect(await search("how is it?")).toEqual([]);
      });

      it("matches terms as given, whatever characters they hold", async () => {
        await upsert([doc("a.ts", ["it's a match: o'brien & co | !x"])]);
        const found = await index.searchLexical({
          key: KEY,
          terms: ["o'brien", "&", "|", "!", "match", "':*"],
          scope: [],
          boost: {},
          limit: 5,
        });
        expect(paths(found)).toEqual(["a.ts"]);
      });
    });

    describe("scope", () => {
      const scoped = async (...scope: RagScopeCondition[]) => paths(await search("alpha", { scope }))?.sort();

      beforeEach(async () => {
        await upsert([
          doc("src/core/store.ts", ["alpha one"], {
            language: "typescript",
            repo: "aptix",
            tags: ["core", "storage"],
            metadata: { owner: "team-a", kind: "class" },
          }),
          doc("src/cli/main.py", ["alpha two"], {
            language: "python",
            repo: "tools",
            tags: ["cli"],
            metadata: { owner: "team-b" },
          }),
          doc("docs/readme.md", ["alpha three"], { language: "markdown", repo: null }),
        ]);
      });

      const ALL = ["docs/readme.md", "src/cli/main.py", "src/core/store.ts"];

      it("keeps every chunk without conditions", async () => {
        expect(await scoped()).toEqual(ALL);
      });

      it("tests `path` exactly with == and !=, and as a substring with contains and does_not_contain", async () => {
        expect(await scoped({ key: "path", operator: "==", values: ["src/cli/main.py", "nope"] })).toEqual([
          "src/cli/main.py",
        ]);
        expect(await scoped({ key: "path", operator: "==", values: ["src/cli"] })).toEqual([]);
        expect(
          await scoped({ key: "path", operator: "!=", values: ["src/cli/main.py", "docs/readme.md"] }),
        ).toEqual(["src/core/store.ts"]);
        expect(await scoped({ key: "path", operator: "contains", values: ["src/", "zzz"] })).toEqual([
          "src/cli/main.py",
          "src/core/store.ts",
        ]);
        expect(await scoped({ key: "path", operator: "does_not_contain", values: ["core", "cli"] })).toEqual([
          "docs/readme.md",
        ]);
      });

      it("tests `language` with every operator", async () => {
        expect(await scoped({ key: "language", operator: "==", values: ["python", "markdown"] })).toEqual([
          "docs/readme.md",
          "src/cli/main.py",
        ]);
        expect(await scoped({ key: "language", operator: "!=", values: ["python"] })).toEqual([
          "docs/readme.md",
          "src/core/store.ts",
        ]);
        expect(await scoped({ key: "language", operator: "contains", values: ["script"] })).toEqual([
          "src/core/store.ts",
        ]);
        expect(
          await scoped({ key: "language", operator: "does_not_contain", values: ["script", "mark"] }),
        ).toEqual(["src/cli/main.py"]);
      });

      it("tests `repo`, where a document without a repo lacks the key", async () => {
        expect(await scoped({ key: "repo", operator: "==", values: ["aptix"] })).toEqual([
          "src/core/store.ts",
        ]);
        expect(await scoped({ key: "repo", operator: "!=", values: ["aptix"] })).toEqual([
          "docs/readme.md",
          "src/cli/main.py",
        ]);
        expect(await scoped({ key: "repo", operator: "contains", values: ["too"] })).toEqual([
          "src/cli/main.py",
        ]);
        expect(await scoped({ key: "repo", operator: "does_not_contain", values: ["too"] })).toEqual([
          "docs/readme.md",
          "src/core/store.ts",
        ]);
      });

      it("tests `tag` by membership, never by substring", async () => {
        expect(await scoped({ key: "tag", operator: "==", values: ["cli", "storage"] })).toEqual([
          "src/cli/main.py",
          "src/core/store.ts",
        ]);
        expect(await scoped({ key: "tag", operator: "contains", values: ["core"] })).toEqual([
          "src/core/store.ts",
        ]);
        expect(await scoped({ key: "tag", operator: "contains", values: ["stor", "cl"] })).toEqual([]);
        expect(await scoped({ key: "tag", operator: "!=", values: ["core"] })).toEqual([
          "docs/readme.md",
          "src/cli/main.py",
        ]);
        expect(
          await scoped({ key: "tag", operator: "does_not_contain", values: ["cli", "storage"] }),
        ).toEqual(["docs/readme.md"]);
      });

      it("tests any other key against the metadata, where a chunk may lack it", async () => {
        expect(await scoped({ key: "owner", operator: "==", values: ["team-a"] })).toEqual([
          "src/core/store.ts",
        ]);
        expect(await scoped({ key: "owner", operator: "!=", values: ["team-a"] })).toEqual([
          "docs/readme.md",
          "src/cli/main.py",
        ]);
        expect(await scoped({ key: "owner", operator: "contains", values: ["team"] })).toEqual([
          "src/cli/main.py",
          "src/core/store.ts",
        ]);
        expect(await scoped({ key: "kind", operator: "does_not_contain", values: ["clas"] })).toEqual([
          "docs/readme.md",
          "src/cli/main.py",
        ]);
      });

      it("matches nothing with == or contains on a key no chunk has, and everything with != or does_not_contain", async () => {
        expect(await scoped({ key: "unknown", operator: "==", values: ["x"] })).toEqual([]);
        expect(await scoped({ key: "unknown", operator: "contains", values: [""] })).toEqual([]);
        expect(await scoped({ key: "unknown", operator: "!=", values: ["x"] })).toEqual(ALL);
        expect(await scoped({ key: "unknown", operator: "does_not_contain", values: ["x"] })).toEqual(ALL);
      });

      it("ANDs the conditions", async () => {
        expect(
          await scoped(
            { key: "path", operator: "contains", values: ["src/"] },
            { key: "language", operator: "!=", values: ["python"] },
          ),
        ).toEqual(["src/core/store.ts"]);
        expect(
          await scoped(
            { key: "repo", operator: "==", values: ["aptix"] },
            { key: "tag", operator: "==", values: ["cli"] },
          ),
        ).toEqual([]);
      });

      it("filters before the limit, so the best chunks in scope are answered", async () => {
        await upsert([doc("src/best.ts", ["alpha alpha alpha beta"], { repo: "other" })]);
        const found = await search("alpha beta", {
          scope: [{ key: "repo", operator: "==", values: ["tools"] }],
          limit: 1,
        });
        expect(paths(found)).toEqual(["src/cli/main.py"]);
      });
    });

    describe("boosts", () => {
      beforeEach(async () => {
        await upsert([
          doc("a/service.ts", ["session service"], { repo: "first", language: "typescript" }),
          doc("b/service.py", ["session service"], { repo: "second", language: "python" }),
          doc("c/other.md", ["unrelated session"], { repo: "third", language: "markdown" }),
        ]);
      });

      it("ranks chunks of the hinted repo above equal ones", async () => {
        expect(paths(await search("session service", { boost: { repo: "second" } }))?.[0]).toBe(
          "b/service.py",
        );
        expect(paths(await search("session service", { boost: { repo: "first" } }))?.[0]).toBe(
          "a/service.ts",
        );
      });

      it("ranks chunks of the hinted language above equal ones", async () => {
        expect(paths(await search("session service", { boost: { language: "python" } }))?.[0]).toBe(
          "b/service.py",
        );
        expect(paths(await search("session service", { boost: { language: "typescript" } }))?.[0]).toBe(
          "a/service.ts",
        );
      });

      it("never filters: chunks of other repos and languages are still answered", async () => {
        const found = paths(await search("session", { boost: { repo: "first", language: "typescript" } }));
        expect(found?.[0]).toBe("a/service.ts");
        expect(found?.sort()).toEqual(["a/service.ts", "b/service.py", "c/other.md"]);
        expect(paths(await search("session", { boost: { repo: "nowhere" } }))).toHaveLength(3);
      });
    });

    // Declared only for an index that stores embeddings: a suite that cannot pass is left out, not skipped.
    if (options.vectors) {
      describe("vector search", () => {
        async function embedded() {
          const documents = [
            doc("north.ts", ["north"], { repo: "compass" }),
            doc("east.ts", ["east"]),
            doc("west.ts", ["west"]),
            doc("unembedded.ts", ["nothing"]),
          ];
          await upsert(documents);
          const [north, east, west] = documents.map((document) => document.chunks[0]?.chunkId ?? "");
          await index.storeEmbeddings(KEY, MODEL, [
            { chunkId: north ?? "", embedding: [0, 1, 0] },
            { chunkId: east ?? "", embedding: [1, 0, 0] },
            { chunkId: west ?? "", embedding: [-1, 0.1, 0] },
          ]);
          return { north: north ?? "", east: east ?? "", west: west ?? "" };
        }

        function nearest(
          embedding: number[],
          input: { scope?: RagScopeCondition[]; limit?: number; model?: string } = {},
        ) {
          return index.searchVector({
            key: KEY,
            model: input.model ?? MODEL,
            embedding,
            scope: input.scope ?? [],
            limit: input.limit ?? 10,
          });
        }

        it("ranks the embedded chunks by cosine similarity, best first", async () => {
          await embedded();
          const found = (await nearest([0.9, 0.2, 0])) ?? [];
          expect(paths(found)).toEqual(["east.ts", "north.ts", "west.ts"]);
          expect(found[0]?.score).toBeCloseTo(0.9 / Math.hypot(0.9, 0.2), 5);
          expect(found[2]?.score).toBeLessThan(0);
          expect(paths(await nearest([0.9, 0.2, 0], { limit: 1 }))).toEqual(["east.ts"]);
        });

        it("answers only chunks embedded with the model asked for", async () => {
          await embedded();
          expect(await nearest([1, 0, 0], { model: "another-model" })).toEqual([]);
        });

        it("filters by scope before the limit", async () => {
          await embedded();
          const scope: RagScopeCondition[] = [{ key: "repo", operator: "==", values: ["compass"] }];
          expect(paths(await nearest([1, 0, 0], { scope, limit: 1 }))).toEqual(["north.ts"]);
        });

        it("replaces a chunk's embedding for the same model", async () => {
          const { north } = await embedded();
          await index.storeEmbeddings(KEY, MODEL, [{ chunkId: north, embedding: [0, 0, 2] }]);
          const found = await nearest([0, 0, 1]);
          expect(paths(found)?.[0]).toBe("north.ts");
          expect(found).toHaveLength(3);
          expect(found?.[0]?.score).toBeCloseTo(1, 5);
        });

        it("drops the embeddings of a document whose content changed", async () => {
          await embedded();
          await upsert([doc("east.ts", ["east changed"], { hash: "changed" })]);
          expect(paths(await nearest([1, 0, 0]))).toEqual(["north.ts", "west.ts"]);
        });

        it("ignores embeddings for another principal's chunks and answers undefined for an unknown workspace", async () => {
          const { east } = await embedded();
          await upsert([doc("theirs.ts", ["theirs"])], false, OTHER_PRINCIPAL);
          await index.storeEmbeddings(OTHER_PRINCIPAL, MODEL, [{ chunkId: east, embedding: [0, 0, 1] }]);
          expect((await nearest([1, 0, 0], { limit: 1 }))?.[0]?.score).toBeCloseTo(1, 5);
          expect(
            await index.searchVector({
              key: OTHER_PRINCIPAL,
              model: MODEL,
              embedding: [1, 0, 0],
              scope: [],
              limit: 5,
            }),
          ).toEqual([]);
          expect(
            await index.searchVector({
              key: { ...KEY, workspaceId: "unknown" },
              model: MODEL,
              embedding: [1, 0, 0],
              scope: [],
              limit: 5,
            }),
          ).toBeUndefined();
        });
      });
    }
  });
}
