import { types } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PreparedPglite } from "../src/index.js";

const database = new PreparedPglite();

beforeAll(async () => {
  await database.waitReady;
  await database.exec(`
    create table items (id integer primary key, name text not null, tags jsonb, at timestamptz);
    create schema one; create table one.t (v text); insert into one.t values ('one');
    create schema two; create table two.t (v text); insert into two.t values ('two');
  `);
});

afterAll(async () => {
  await database.close();
});

/** The statements the instance keeps prepared (for `text` alone, when given), read without parameters. */
async function prepared(text?: string): Promise<number> {
  const where = text === undefined ? "" : ` where statement = '${text.replaceAll("'", "''")}'`;
  const [result] = await database.exec(`select count(*)::int as n from pg_prepared_statements${where}`);
  return Number(result?.rows[0]?.n ?? 0);
}

describe("PreparedPglite", () => {
  it("prepares a statement with parameters once and answers each call as PGlite's query does", async () => {
    const insert =
      "insert into items (id, name, tags, at) values ($1, $2, $3, $4) returning id, name, tags, at";
    const at = new Date("2026-01-02T03:04:05.000Z");
    const first = await database.query(insert, [1, "first", { a: [1, 2] }, at]);
    const second = await database.query(insert, [2, "second", null, null]);

    expect(first.rows).toEqual([{ id: 1, name: "first", tags: { a: [1, 2] }, at }]);
    expect(first.affectedRows).toBe(1);
    expect(first.fields.map((field) => field.name)).toEqual(["id", "name", "tags", "at"]);
    expect(second.rows).toEqual([{ id: 2, name: "second", tags: null, at: null }]);
    expect(await prepared(insert)).toBe(1);

    const select = "select id, name from items where id = any($1::int[]) order by id";
    const plain = await database.transaction((tx) => tx.query(select, [[1, 2]]));
    expect((await database.query(select, [[1, 2]])).rows).toEqual(plain.rows);
  });

  it("reads rows as arrays, with the parsers a call gives over the instance's", async () => {
    const raw = { [types.TIMESTAMPTZ]: (value: string) => value };
    const select = "select id, at from items where id = $1";
    const result = await database.query(select, [1], { rowMode: "array", parsers: raw });
    expect(result.rows).toEqual([[1, expect.stringMatching(/^2026-01-02 03:04:05/)]]);
    // The instance's own parsers are untouched: the next call without them gets a Date.
    expect((await database.query(select, [1])).rows).toEqual([
      { id: 1, at: new Date("2026-01-02T03:04:05.000Z") },
    ]);
  });

  it("rejects a failing statement with Postgres's error and keeps serving", async () => {
    const insert = "insert into items (id, name) values ($1, $2)";
    await database.query(insert, [10, "ten"]);
    await expect(database.query(insert, [10, "again"])).rejects.toMatchObject({ code: "23505" });
    await expect(database.query("select nothing from nowhere where 1 = $1", [1])).rejects.toMatchObject({
      code: "42P01",
    });
    expect((await database.query("select name from items where id = $1", [10])).rows).toEqual([
      { name: "ten" },
    ]);
  });

  it("never runs a statement inside a transaction another caller has open", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let began!: () => void;
    const begun = new Promise<void>((resolve) => {
      began = resolve;
    });
    const order: string[] = [];
    const rolledBack = database
      .transaction(async (tx) => {
        await tx.query("insert into items (id, name) values (20, 'in the transaction')");
        began();
        await held;
        order.push("transaction ends");
        throw new Error("roll back");
      })
      .catch((error: Error) => error.message);
    await begun;
    const outside = database
      .query("insert into items (id, name) values ($1, $2)", [21, "outside"])
      .then(() => order.push("statement done"));
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    expect(await rolledBack).toBe("roll back");
    await outside;

    expect(order).toEqual(["transaction ends", "statement done"]);
    const rows = await database.query("select id from items where id = any($1::int[]) order by id", [
      [20, 21],
    ]);
    expect(rows.rows).toEqual([{ id: 21 }]);
  });

  it("keeps a bounded number of statements prepared, answering every text and keeping the ones in use", async () => {
    const hot = "select $1::int * 2 as n";
    const nameOfHot = async () => {
      const [result] = await database.exec(
        `select name from pg_prepared_statements where statement = '${hot}'`,
      );
      return result?.rows.map((row) => row.name);
    };
    await database.query(hot, [1]);
    const hotName = await nameOfHot();
    for (let index = 0; index < 300; index++) {
      const result = await database.query<{ n: number }>(`select $1::int + ${index} as n`, [1]);
      expect(result.rows).toEqual([{ n: 1 + index }]);
      if (index % 50 === 0) expect((await database.query(hot, [index])).rows).toEqual([{ n: 2 * index }]);
    }
    expect(await prepared()).toBeGreaterThan(200);
    expect(await prepared()).toBeLessThanOrEqual(256);
    // Used all along, the hot statement was never closed and prepared again.
    expect(hotName).toHaveLength(1);
    expect(await nameOfHot()).toEqual(hotName);
  });

  it("follows the search path a prepared statement is run under", async () => {
    const select = "select v from t where v is not null and $1::int = 1";
    await database.exec("set search_path to one");
    expect((await database.query(select, [1])).rows).toEqual([{ v: "one" }]);
    await database.exec("set search_path to two");
    expect((await database.query(select, [1])).rows).toEqual([{ v: "two" }]);
    await database.exec("set search_path to public");
  });

  it("refuses statements once closed", async () => {
    const closing = new PreparedPglite();
    await closing.waitReady;
    expect((await closing.query("select $1::int as n", [1])).rows).toEqual([{ n: 1 }]);
    await closing.close();
    await expect(closing.query("select $1::int as n", [1])).rejects.toThrow(/closed/);
  });
});
