import { type AptixStore, openStore, type StoreStep } from "@aptix/store-drizzle";
import type { Logger } from "pino";
import type { ServerEnv } from "../config/server-env.js";
import { describeDatabase } from "./describe-database.js";

/** What each step of opening the store is called in the start-up lines, as it starts and once done. */
const STEP_LINES: Record<StoreStep["name"], { starting: string; done: string }> = {
  create: {
    starting: "creating the embedded database (a first start takes a while)",
    done: "created the embedded database",
  },
  open: { starting: "opening the embedded database", done: "opened the embedded database" },
  migrate: { starting: "applying database migrations", done: "database migrations applied" },
};

/**
 * The store of DATABASE_URL: Postgres, or embedded PGlite. Each step of opening it is logged as it starts and with
 * its duration once done: a first embedded start spends tens of seconds creating the database.
 */
export function openStoreFromEnv(
  env: ServerEnv,
  options: { vectors: boolean; logger: Logger },
): Promise<AptixStore> {
  const database = describeDatabase(env.DATABASE_URL);
  return openStore(env.DATABASE_URL, {
    ...(env.APTIX_DATABASE_SCHEMA ? { schema: env.APTIX_DATABASE_SCHEMA } : {}),
    ...(env.APTIX_PGLITE_SHARED_BUFFERS
      ? { pgliteSettings: { shared_buffers: env.APTIX_PGLITE_SHARED_BUFFERS } }
      : {}),
    // Embeddings need pgvector: opening stops start-up, naming the extension, when Postgres lacks it.
    vectors: options.vectors,
    onWarning: (message, detail) => options.logger.warn(detail, message),
    onStep: ({ name, durationMs }) => {
      if (durationMs === undefined) options.logger.info({ database }, STEP_LINES[name].starting);
      else options.logger.info({ database, durationMs }, STEP_LINES[name].done);
    },
  });
}
