import { type AptixStore, openStore } from "@aptix/store-drizzle";
import type { ServerEnv } from "../config/server-env.js";

/** The store of DATABASE_URL: Postgres, or embedded PGlite. */
export function openStoreFromEnv(env: ServerEnv, options: { vectors: boolean }): Promise<AptixStore> {
  return openStore(env.DATABASE_URL, {
    ...(env.APTIX_DATABASE_SCHEMA ? { schema: env.APTIX_DATABASE_SCHEMA } : {}),
    ...(env.APTIX_PGLITE_SHARED_BUFFERS
      ? { pgliteSettings: { shared_buffers: env.APTIX_PGLITE_SHARED_BUFFERS } }
      : {}),
    // Embeddings need pgvector: opening stops start-up, naming the extension, when Postgres lacks it.
    vectors: options.vectors,
  });
}
