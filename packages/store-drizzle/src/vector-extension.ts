import { sql } from "drizzle-orm";
import type { StoreDatabase } from "./domains/rows.js";
import { rowsOf } from "./rows-of.js";
import { messageOf } from "./store-unavailable.js";

/**
 * Creates pgvector's `vector` extension when the database lacks it and answers the schema it lives in (the
 * first of the `search_path` when this call creates it). Fails naming the extension when the database cannot
 * provide it (a Postgres server without pgvector installed, or a PGlite started without it), so a deployment
 * configured for embeddings stops at start-up rather than at its first search.
 */
export async function enableVectorExtension(db: StoreDatabase): Promise<string> {
  try {
    await db.execute(sql`create extension if not exists vector`);
  } catch (error) {
    throw new Error(
      `Embeddings need the Postgres extension "vector" (pgvector), which this database cannot provide: ${messageOf(error)}. Install pgvector on the database server, or configure no embedding model.`,
      { cause: error },
    );
  }
  const result = await db.execute(
    sql`select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'vector'`,
  );
  const schema = rowsOf(result)[0]?.schema;
  if (typeof schema !== "string") {
    throw new Error('The Postgres extension "vector" was created but cannot be found.');
  }
  return schema;
}
