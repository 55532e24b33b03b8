import { sql } from "drizzle-orm";
import type { StoreDatabase } from "./drizzle-session-store.js";
import { rowsOf } from "./rows-of.js";

/**
 * Creates pgvector's `vector` extension when the database lacks it and answers the schema it lives in (the
 * first of the `search_path` when this call creates it). Throws the driver's error when the database cannot
 * provide it, e.g. a Postgres server without pgvector installed, or a PGlite started without it.
 */
export async function enableVectorExtension(db: StoreDatabase): Promise<string> {
  await db.execute(sql`create extension if not exists vector`);
  const result = await db.execute(
    sql`select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'vector'`,
  );
  const schema = rowsOf(result)[0]?.schema;
  if (typeof schema !== "string") {
    throw new Error('The Postgres extension "vector" was created but cannot be found.');
  }
  return schema;
}
