import { fileURLToPath } from "node:url";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { bigint, pgTable, serial, text } from "drizzle-orm/pg-core";
import type { StoreDatabase } from "./domains/rows.js";

/** drizzle's migrations table, kept in the store's schema. */
export const MIGRATIONS_TABLE = "__drizzle_migrations";
/** The migrations drizzle-kit generated from `schema.ts` (`drizzle/` at the package root, beside `src/` and `dist/`). */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL("../drizzle/", import.meta.url));

/** What drizzle's `migrate` is given: the package's migrations, recorded in the store's schema. */
export function migrationConfig(schema: string) {
  return { migrationsFolder: MIGRATIONS_FOLDER, migrationsSchema: schema, migrationsTable: MIGRATIONS_TABLE };
}

/** drizzle's migrations table, read unqualified: the connection's search_path is the store's schema. */
const migrationsTable = pgTable(MIGRATIONS_TABLE, {
  id: serial("id").primaryKey(),
  hash: text("hash").notNull(),
  createdAt: bigint("created_at", { mode: "number" }),
});

/**
 * A check of the migrations `db` has applied: answers how many of the package's (read once, here) are not.
 */
export function pendingMigrations(
  db: StoreDatabase,
  schema: string,
): () => Promise<{ pending: number; total: number }> {
  const expected = readMigrationFiles(migrationConfig(schema));
  return async () => {
    const applied = await db.select({ createdAt: migrationsTable.createdAt }).from(migrationsTable);
    const appliedAt = new Set(applied.map((row) => Number(row.createdAt)));
    const pending = expected.filter((migration) => !appliedAt.has(migration.folderMillis));
    return { pending: pending.length, total: expected.length };
  };
}
