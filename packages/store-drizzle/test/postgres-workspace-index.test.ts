import { ManualClock } from "@aptix/core/testing";
import { describeWorkspaceIndexContract } from "@aptix/testing-stores";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../src/index.js";
import { adminSql, closeAdmin, dropSchema, randomSchema, TEST_DATABASE_URL } from "./support/databases.js";

afterAll(async () => {
  await closeAdmin();
});

// This Postgres has no pgvector: the contract runs without vector search, which PGlite's suite covers.
describeWorkspaceIndexContract(
  "drizzle on Postgres (postgres.js)",
  async () => {
    await adminSql(); // Fails the test, loudly, when Postgres is down.
    const schema = randomSchema();
    const clock = new ManualClock();
    const store = await openStore(TEST_DATABASE_URL, { schema, clock });
    return {
      index: store.workspaceIndex,
      clock,
      async close() {
        await store.close();
        await dropSchema(schema);
      },
    };
  },
  { vectors: false },
);

describe("vectors on Postgres without pgvector", () => {
  it("refuses to open with vectors, naming the `vector` extension", async () => {
    const sql = await adminSql();
    const [available] =
      await sql`select count(*)::int as count from pg_available_extensions where name = 'vector'`;
    expect(available?.count, "this test needs a Postgres without pgvector").toBe(0);

    const schema = randomSchema();
    try {
      await expect(openStore(TEST_DATABASE_URL, { schema, vectors: true })).rejects.toThrow(
        /Embeddings need the Postgres extension "vector" \(pgvector\)/,
      );
    } finally {
      await dropSchema(schema);
    }
  });
});
