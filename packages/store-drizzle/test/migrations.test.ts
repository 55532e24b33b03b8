import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type DrizzleSnapshotJSON, generateDrizzleJson, generateMigration } from "drizzle-kit/api";
import { integer, pgTable } from "drizzle-orm/pg-core";
import { describe, expect, it } from "vitest";
import { MIGRATIONS_FOLDER } from "../src/index.js";
import * as schema from "../src/schema.js";

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
});
