import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AptixClient } from "../src/index.js";
import { indexAndSearch } from "./readme/index-and-search.js";
import { API_KEY, uniqueId } from "./support/live-server.js";
import { OTHER_API_KEY, startWiredServer } from "./support/started-server.js";

let server: Awaited<ReturnType<typeof startWiredServer>>;

// Waits for the server's start (PGlite's initdb among it: minutes on a busy two-core machine) with no time limit:
// it either listens or throws.
beforeAll(async () => {
  server = await startWiredServer();
}, 0);

afterAll(async () => {
  await server?.close();
});

const client = (apiKey = API_KEY) => new AptixClient({ baseUrl: server.url, apiKey });

const documents = [
  {
    path: "src/cart.ts",
    contents:
      "export function cartTotal(prices: number[]) {\n  return prices.reduce((a, b) => a + b, 0);\n}\n",
  },
  {
    path: "docs/notes.md",
    contents: "# Notes\n\nThe cart total is the sum of the prices.\n",
    tags: ["docs"],
  },
];

describe("workspaces.upsert", () => {
  it("creates the workspace, and counts an unchanged document as unchanged", async () => {
    const workspaceId = uniqueId("ws");
    const first = await client().workspaces.upsert(workspaceId, { documents });
    expect(first).toMatchObject({
      successful: true,
      result: { workspaceId, upserted: 2, unchanged: 0, deleted: 0 },
    });
    const again = await client().workspaces.upsert(workspaceId, { documents });
    expect(again).toMatchObject({ successful: true, result: { upserted: 0, unchanged: 2, deleted: 0 } });
  });

  it("with replace, deletes the documents not in the set", async () => {
    const workspaceId = uniqueId("ws");
    await client().workspaces.upsert(workspaceId, { documents });
    const replaced = await client().workspaces.upsert(workspaceId, {
      documents: documents.slice(0, 1),
      replace: true,
    });
    expect(replaced).toMatchObject({ successful: true, result: { unchanged: 1, deleted: 1 } });
    expect(await client().workspaces.get(workspaceId)).toMatchObject({ result: { documents: 1 } });
  });

  it("returns VALIDATION_FAILED naming the field for a path that leaves the workspace", async () => {
    const answer = await client().workspaces.upsert(uniqueId("ws"), {
      documents: [{ path: "../secret.txt", contents: "x" }],
    });
    expect(answer).toMatchObject({
      successful: false,
      errors: [{ code: "VALIDATION_FAILED", message: expect.stringContaining("documents[0].path") }],
    });
  });
});

describe("workspaces.get, search, remove and drop", () => {
  it("reads the summary, finds a chunk, removes a document by path and drops the workspace", async () => {
    const workspaceId = uniqueId("ws");
    await client().workspaces.upsert(workspaceId, { documents });

    const summary = await client().workspaces.get(workspaceId);
    expect(summary).toMatchObject({ successful: true, result: { workspaceId, documents: 2 } });
    expect(summary.successful && typeof summary.result.updatedAt).toBe("string");

    const found = await client().workspaces.search(workspaceId, { query: "cartTotal", limit: 5 });
    expect(found.successful).toBe(true);
    const paths = found.successful ? found.result.chunks.map((chunk) => chunk.path) : [];
    expect(paths[0]).toBe("src/cart.ts");

    const scoped = await client().workspaces.search(workspaceId, {
      query: "cart total",
      ragScope: [{ key: "tag", operator: "contains", values: ["docs"] }],
    });
    expect(scoped.successful && scoped.result.chunks.map((chunk) => chunk.path)).toEqual(["docs/notes.md"]);

    expect(await client().workspaces.remove(workspaceId, ["docs/notes.md"])).toMatchObject({
      successful: true,
      result: { deleted: 1 },
    });
    expect(await client().workspaces.get(workspaceId)).toMatchObject({ result: { documents: 1 } });

    expect(await client().workspaces.drop(workspaceId)).toMatchObject({ successful: true });
    const gone = await client().workspaces.get(workspaceId);
    expect(gone.successful === false && gone.errors[0].code).toBe("WORKSPACE_NOT_FOUND");
  });

  it("answers WORKSPACE_NOT_FOUND for an unknown workspace and for another principal's", async () => {
    const workspaceId = uniqueId("ws");
    await client().workspaces.upsert(workspaceId, { documents });
    for (const answer of [
      await client().workspaces.get(uniqueId("never-pushed")),
      await client(OTHER_API_KEY).workspaces.get(workspaceId),
      await client(OTHER_API_KEY).workspaces.search(workspaceId, { query: "cart" }),
      await client(OTHER_API_KEY).workspaces.remove(workspaceId, ["src/cart.ts"]),
      await client(OTHER_API_KEY).workspaces.drop(workspaceId),
    ]) {
      expect(answer.successful === false && answer.errors[0].code).toBe("WORKSPACE_NOT_FOUND");
    }
    expect(await client().workspaces.get(workspaceId)).toMatchObject({ result: { documents: 2 } });
  });
});

describe("README example against the real server", () => {
  it("indexAndSearch pushes the files and lists where the query is found", async () => {
    const files = new Map(documents.map((document) => [document.path, document.contents]));
    // `cartTotal` splits into `cart` and `total`: the notes mention both, below the code that defines it.
    expect(await indexAndSearch(client(), uniqueId("readme"), files, "cartTotal")).toEqual([
      "src/cart.ts:1-3",
      expect.stringMatching(/^docs\/notes\.md:\d+-\d+$/),
    ]);
  });
});
