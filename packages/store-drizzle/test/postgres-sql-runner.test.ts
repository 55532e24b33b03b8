import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { postgresRunner } from "../src/index.js";
import { adminSql, closeAdmin, dropSchema, randomSchema, TEST_DATABASE_URL } from "./support/databases.js";

afterAll(async () => {
  await closeAdmin();
});

/** A runner over a pool of one connection in a fresh schema with one table, `notes (id int primary key)`. */
async function withRunner(
  work: (runner: ReturnType<typeof postgresRunner>, statements: string[]) => Promise<void>,
): Promise<void> {
  const admin = await adminSql();
  const schema = randomSchema();
  await admin.unsafe(`create schema "${schema}"; create table "${schema}".notes (id int primary key)`);
  const statements: string[] = [];
  const pool = postgres(TEST_DATABASE_URL, {
    max: 1,
    connection: { search_path: `"${schema}"` },
    onnotice: () => {},
    debug: (_connection, query) => statements.push(query),
  });
  try {
    await pool`select 1`;
    statements.splice(0);
    await work(postgresRunner(pool), statements);
  } finally {
    await pool.end({ timeout: 5 });
    await dropSchema(schema);
  }
}

const ids = async (runner: ReturnType<typeof postgresRunner>) =>
  (await runner.run("select id from notes order by id", [])).map((row) => row.id);

describe("postgresRunner's transactions", () => {
  it("send BEGIN with the first statement and COMMIT with `commitWith`'s, in order, and commit", async () => {
    await withRunner(async (runner, statements) => {
      const answer = await runner.transaction(async (run, commitWith) => {
        const first = run("insert into notes values ($1) returning id", [1]);
        const second = run("insert into notes values ($1) returning id", [2]);
        const rows = [...(await first), ...(await second)];
        const last = await commitWith("insert into notes values ($1) returning id", [3]);
        return [...rows, ...last].map((row) => row.id);
      });
      expect(answer).toStrictEqual([1, 2, 3]);
      expect(statements.map((text) => text.split(" ")[0])).toStrictEqual([
        "begin",
        "insert",
        "insert",
        "insert",
        "commit",
      ]);
      expect(await ids(runner)).toStrictEqual([1, 2, 3]);
    });
  });

  it("commit without waiting for the disk only when told, for that transaction alone", async () => {
    await withRunner(async (runner) => {
      const setting = (run: (text: string, params: unknown[]) => Promise<Record<string, unknown>[]>) =>
        run("select current_setting('synchronous_commit') as value", []).then(([row]) => row?.value);
      const server = await setting(runner.run);
      const inside = await runner.transaction(
        async (run, commitWith) => {
          await run("insert into notes values ($1)", [1]);
          return setting(commitWith);
        },
        { synchronousCommit: false },
      );
      expect(inside).toBe("off");
      expect(await ids(runner)).toStrictEqual([1]);
      // The same connection (a pool of one) is back at the server's setting, in a transaction and out of one.
      expect(await runner.transaction((run) => setting(run))).toBe(server);
      expect(await setting(runner.run)).toBe(server);
      expect(server).not.toBe("off");
    });
  });

  it("commit after `work` when it sends no `commitWith`", async () => {
    await withRunner(async (runner) => {
      await runner.transaction(async (run) => run("insert into notes values ($1)", [1]));
      expect(await ids(runner)).toStrictEqual([1]);
    });
  });

  it("roll back everything when `work` throws, statements still in flight included, and free the connection", async () => {
    await withRunner(async (runner) => {
      const refused = runner.transaction(async (run) => {
        const inserted = run("insert into notes values ($1)", [1]);
        run("insert into notes values ($1)", [2]);
        await inserted;
        throw new Error("declined");
      });
      await expect(refused).rejects.toThrow("declined");
      // The pool's one connection is back: this would wait forever otherwise.
      expect(await ids(runner)).toStrictEqual([]);
    });
  });

  it("answer a failed statement's error, sent with the COMMIT or before it, and change nothing", async () => {
    await withRunner(async (runner) => {
      const duplicate = runner.transaction(async (run, commitWith) => {
        await run("insert into notes values ($1)", [1]);
        return commitWith("insert into notes values ($1)", [1]);
      });
      await expect(duplicate).rejects.toMatchObject({ code: "23505" });
      const pipelined = runner.transaction(async (run, commitWith) => {
        const failing = run("insert into notes values ($1::int)", ["not a number"]);
        const after = commitWith("insert into notes values ($1)", [2]);
        await failing;
        return after;
      });
      await expect(pipelined).rejects.toMatchObject({ code: "22P02" });
      expect(await ids(runner)).toStrictEqual([]);
      // The connection is free and in no transaction: a new one commits.
      await runner.transaction(async (_run, commitWith) => commitWith("insert into notes values ($1)", [3]));
      expect(await ids(runner)).toStrictEqual([3]);
    });
  });
});
