import type { PGlite } from "@electric-sql/pglite";
import { describe, expect, it } from "vitest";
import { createPglite } from "../src/create-pglite.js";
import { pgliteRunner } from "../src/index.js";

/** A runner over a fresh in-memory PGlite with one table, `notes (id int primary key, body jsonb)`. */
async function withRunner(
  work: (runner: ReturnType<typeof pgliteRunner>, client: PGlite, statements: string[]) => Promise<void>,
): Promise<void> {
  const client = await createPglite("memory://");
  try {
    await client.exec("create table notes (id int primary key, body jsonb)");
    const statements: string[] = [];
    await work(
      pgliteRunner(client, (sql) => statements.push(sql)),
      client,
      statements,
    );
  } finally {
    await client.close();
  }
}

const ids = async (client: PGlite) =>
  (await client.query<{ id: number }>("select id from notes order by id")).rows.map((row) => row.id);

/** Resolves once what is ready to run has run: a statement not held back by a lock has been sent. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 20));

/** Resolves when `release()` is called. */
function gate(): { opened: Promise<void>; release: () => void } {
  let release = () => {};
  const opened = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { opened, release };
}

describe("pgliteRunner", () => {
  it("answers the rows and errors PGlite.query answers, its parameters serialized as query serializes them", async () => {
    await withRunner(async (runner, client) => {
      const text = `select $1::int4 as "int", $2::int8 as "big", $3::jsonb as "json", $4::timestamptz as "at",
        $5::text as "text", $6::bool as "flag", $7::text[] as "list", $8::bytea as "bytes", $9::int4 as "none",
        $10::text as "wide", $11::text as "empty"`;
      const params = [
        7,
        "9007199254740993",
        { a: [1, "b"], clé: "漢字 😀" },
        new Date("2026-01-02T03:04:05.678Z"),
        "x'y",
        true,
        ["a", "b,c"],
        Uint8Array.from([1, 2]),
        undefined,
        // Bytes, not characters, measure a value in the Bind message.
        "é 漢字 😀 ".repeat(500),
        "",
      ];
      const expected = (await client.query(text, params)).rows;
      expect(await runner.run(text, params)).toStrictEqual(expected);
      // The second run binds the statement prepared by the first.
      expect(await runner.run(text, params)).toStrictEqual(expected);
      expect(await runner.run("update notes set body = $1 where id = $2", [{}, 1])).toStrictEqual([]);

      await runner.run("insert into notes values ($1, $2)", [1, null]);
      const queried = await client
        .query("insert into notes values ($1, $2)", [1, null])
        .catch((error) => error);
      const ran = await runner.run("insert into notes values ($1, $2)", [1, null]).catch((error) => error);
      expect(ran).toBeInstanceOf(queried.constructor);
      expect(ran).toMatchObject({ code: "23505", message: queried.message, params: [1, null] });
      // Nothing is left half-done: both paths still answer.
      expect(await runner.run("select count(*)::int as n from notes", [])).toStrictEqual([{ n: 1 }]);
      expect(await ids(client)).toStrictEqual([1]);
    });
  });

  it("prepares each statement text once per instance, shared by runners over it", async () => {
    await withRunner(async (runner, client) => {
      await runner.run("select $1::int as n", [1]);
      await runner.run("select $1::int as n", [2]);
      await pgliteRunner(client).run("select $1::int as n", [3]);
      await runner.transaction((run) => run("select $1::int as n", [4]));
      const prepared = await client.query("select statement from pg_prepared_statements");
      expect(prepared.rows).toStrictEqual([{ statement: "select $1::int as n" }]);
    });
  });

  it("reports each statement once, BEGIN and COMMIT or ROLLBACK included", async () => {
    await withRunner(async (runner, _client, statements) => {
      await runner.run("select 1", []);
      await runner.transaction(async (run, commitWith) => {
        await run("select 2", []);
        return commitWith("select 3", []);
      });
      await expect(
        runner.transaction(async (run) => {
          await run("select 4", []);
          throw new Error("declined");
        }),
      ).rejects.toThrow("declined");
      expect(statements).toStrictEqual([
        "select 1",
        "BEGIN",
        "select 2",
        "select 3",
        "COMMIT",
        "BEGIN",
        "select 4",
        "ROLLBACK",
      ]);
    });
  });

  it("rolls a transaction back when a statement in it fails, and leaves the instance usable", async () => {
    await withRunner(async (runner, client) => {
      const duplicate = runner.transaction(async (run, commitWith) => {
        await run("insert into notes values ($1)", [1]);
        return commitWith("insert into notes values ($1)", [1]);
      });
      await expect(duplicate).rejects.toMatchObject({ code: "23505" });
      expect(await ids(client)).toStrictEqual([]);
      await runner.transaction((run) => run("insert into notes values ($1)", [2]));
      expect(await ids(client)).toStrictEqual([2]);
    });
  });

  it("runs a statement only outside others' transactions, and keeps others out of its own", async () => {
    await withRunner(async (runner, client) => {
      const theirs = gate();
      const started = gate();
      const foreign = client.transaction(async (tx) => {
        await tx.query("insert into notes values (1)");
        started.release();
        await theirs.opened;
        await tx.rollback();
      });
      await started.opened;
      // Waits for the open transaction to end: had it run inside it, the rollback would undo it.
      const inserted = runner.run("insert into notes values ($1)", [2]);
      await settled();
      theirs.release();
      await Promise.all([foreign, inserted]);
      expect(await ids(client)).toStrictEqual([2]);

      const ours = gate();
      const running = gate();
      const transaction = runner.transaction(async (run) => {
        await run("insert into notes values ($1)", [3]);
        running.release();
        await ours.opened;
        await run("delete from notes where id = $1", [3]);
      });
      await running.opened;
      // Sees the state after our transaction, never the row it inserted and deleted.
      const seen = ids(client);
      await settled();
      ours.release();
      await transaction;
      expect(await seen).toStrictEqual([2]);
    });
  });
});
