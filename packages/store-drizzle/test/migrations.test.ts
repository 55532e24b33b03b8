import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type DrizzleSnapshotJSON, generateDrizzleJson, generateMigration } from "drizzle-kit/api";
import { integer, pgTable } from "drizzle-orm/pg-core";
import { afterAll, describe, expect, it } from "vitest";
import { MIGRATIONS_FOLDER, MIGRATIONS_TABLE, openStore } from "../src/index.js";
import * as schema from "../src/schema.js";
import { adminSql, closeAdmin, dropSchema, randomSchema, TEST_DATABASE_URL } from "./support/databases.js";

interface Journal {
  entries: { idx: number; when: number; tag: string }[];
}

/** The snapshot drizzle-kit wrote with the newest migration: the schema the checked-in migrations produce. */
function latestSnapshot(): DrizzleSnapshotJSON {
  const journal = JSON.parse(
    readFileSync(join(MIGRATIONS_FOLDER, "meta", "_journal.json"), "utf8"),
  ) as Journal;
  const latest = journal.entries.at(-1);
  if (latest === undefined) throw new Error("drizzle/meta/_journal.json lists no migration");
  const prefix = latest.tag.slice(0, latest.tag.indexOf("_"));
  return JSON.parse(
    readFileSync(join(MIGRATIONS_FOLDER, "meta", `${prefix}_snapshot.json`), "utf8"),
  ) as DrizzleSnapshotJSON;
}

afterAll(async () => {
  await closeAdmin();
});

/**
 * What Postgres holds in `schema`: tables, columns, indexes and constraints, sorted, with the schema's name
 * replaced so two schemas compare. Column order is left out: a column a later migration adds comes last.
 */
async function catalogue(schema: string) {
  const sql = await adminSql();
  const rows = async (query: Promise<Record<string, unknown>[]>) =>
    JSON.parse(JSON.stringify(await query).replaceAll(schema, "<schema>")) as Record<string, unknown>[];
  return {
    tables: await rows(sql`
      select table_name, table_type from information_schema.tables
      where table_schema = ${schema} and table_name <> ${MIGRATIONS_TABLE} order by 1`),
    columns: await rows(sql`
      select table_name, column_name, data_type, udt_name, character_maximum_length, numeric_precision,
        datetime_precision, is_nullable, column_default, is_identity, identity_generation, is_generated,
        generation_expression
      from information_schema.columns
      where table_schema = ${schema} and table_name <> ${MIGRATIONS_TABLE} order by 1, 2`),
    indexes: await rows(sql`
      select tablename, indexname, indexdef from pg_indexes
      where schemaname = ${schema} and tablename <> ${MIGRATIONS_TABLE} order by 1, 2`),
    constraints: await rows(sql`
      select rel.relname as table_name, con.conname, con.contype, pg_get_constraintdef(con.oid) as definition
      from pg_constraint con
      join pg_class rel on rel.oid = con.conrelid
      join pg_namespace ns on ns.oid = rel.relnamespace
      where ns.nspname = ${schema} and rel.relname <> ${MIGRATIONS_TABLE} order by 1, 2`),
  };
}

describe("migrations", () => {
  it("match src/schema.ts: drizzle-kit generates nothing new (run `pnpm --filter @aptix/store-drizzle db:generate`)", async () => {
    const previous = latestSnapshot();
    const current = generateDrizzleJson(schema, previous.id);
    expect(await generateMigration(previous, current)).toStrictEqual([]);
  });

  it("would notice a drift (the check above is not vacuous)", async () => {
    const previous = latestSnapshot();
    const drifted = { ...schema, extra: pgTable("extra", { id: integer("id").primaryKey() }) };
    const statements = await generateMigration(previous, generateDrizzleJson(drifted, previous.id));
    expect(statements.join("\n")).toMatch(/CREATE TABLE "extra"/);
  });

  it("name no Postgres schema, so they apply in whichever schema the store is opened with", () => {
    const files = readdirSync(MIGRATIONS_FOLDER).filter((name) => name.endsWith(".sql"));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const text = readFileSync(join(MIGRATIONS_FOLDER, file), "utf8");
      expect(text, file).not.toMatch(/"public"\.|\bpublic\./);
      expect(text, file).not.toMatch(/\bset\s+search_path\b/i);
    }
  });

  it("build in Postgres what src/schema.ts builds when drizzle-kit generates it afresh (an edited or stale .sql file fails this)", async () => {
    const migrated = randomSchema();
    const fresh = randomSchema();
    try {
      // The checked-in files, applied the way the store applies them.
      await (await openStore(TEST_DATABASE_URL, { schema: migrated })).close();
      // drizzle-kit's SQL for the whole schema from nothing, run on one connection whose search_path is `fresh`.
      const statements = await generateMigration(generateDrizzleJson({}), generateDrizzleJson(schema));
      const sql = await adminSql();
      await sql.begin(async (tx) => {
        await tx.unsafe(`create schema "${fresh}"`);
        await tx.unsafe(`set local search_path to "${fresh}"`);
        for (const statement of statements) await tx.unsafe(statement);
      });

      const expected = await catalogue(fresh);
      expect(expected.tables.length).toBeGreaterThan(0);
      expect(await catalogue(migrated)).toStrictEqual(expected);
    } finally {
      await dropSchema(migrated);
      await dropSchema(fresh);
    }
  });
});
