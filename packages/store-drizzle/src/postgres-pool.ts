import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { migrationConfig } from "./migrations.js";
import { enableVectorExtension } from "./vector-extension.js";

/**
 * Connections of one store's postgres.js pool. Few on purpose: once every connection is busy, postgres.js
 * pipelines further statements onto them, and a backend then takes several in one read and answers them in one
 * write, rather than each being a wake-up of a backend of its own. With 16 clients on a 2-core machine, 3 or 4
 * connections against postgres.js's default of 10 cut Postgres's CPU per turn by about a fifth
 * (docs/turn-cost.md).
 */
export const POOL_SIZE = 4;
/** The longest a statement of the pool may run before Postgres cancels it (57014). */
export const STATEMENT_TIMEOUT_MS = 5_000;
/** First key of the advisory lock that serializes migrations of one schema across processes ("Aptx"). */
const MIGRATION_LOCK_CLASS = 0x41707478;

/**
 * How long a connection waits before connecting again after its pool's `failures` connection errors, in seconds.
 * postgres.js's own delay grows to 20 s, and a request waits it out on its connection: in an outage, requests
 * took seconds to be refused, and after it, to be served again. Half a second at most here; jittered, so the
 * pool's connections do not all try at once.
 */
function reconnectDelaySeconds(failures: number): number {
  return (0.5 + Math.random() / 2) * Math.min(0.025 * 2 ** failures, 0.5);
}

/** The postgres.js options of every connection to the store's schema (`quotedSchema`). */
function connectionOptions(quotedSchema: string, onQuery: ((sql: string) => void) | undefined) {
  return {
    // Unqualified table names resolve to the store's schema on every connection.
    connection: { search_path: quotedSchema },
    onnotice: () => {},
    backoff: reconnectDelaySeconds,
    // postgres.js's `debug` hook sees every statement it sends, BEGIN and COMMIT included.
    ...(onQuery === undefined ? {} : { debug: (_connection: number, query: string) => onQuery(query) }),
  };
}

/**
 * Migrates the schema on a connection of its own, under an advisory lock, so instances starting together
 * migrate once; with `vectors`, enables pgvector. Answers the extension's schema and whether the server can
 * compress TOAST values with lz4.
 */
export async function migratePostgres(
  url: string,
  schema: string,
  quotedSchema: string,
  { vectors, onQuery }: { vectors: boolean; onQuery: ((sql: string) => void) | undefined },
): Promise<{ vectorSchema: string | undefined; lz4: boolean }> {
  const migrator = postgres(url, { ...connectionOptions(quotedSchema, onQuery), max: 1 });
  try {
    await migrator`select pg_advisory_lock(${MIGRATION_LOCK_CLASS}, hashtext(${schema}))`;
    await migrator.unsafe(`create schema if not exists ${quotedSchema}`);
    const db = drizzle(migrator);
    await migrate(db, migrationConfig(schema));
    const vectorSchema = vectors ? await enableVectorExtension(db) : undefined;
    const lz4 = await offersLz4(migrator);
    await migrator`select pg_advisory_unlock(${MIGRATION_LOCK_CLASS}, hashtext(${schema}))`;
    return { vectorSchema, lz4 };
  } finally {
    await migrator.end({ timeout: 5 });
  }
}

/**
 * The store's pool of POOL_SIZE connections, its first connection opened (so not by the first request).
 * With `lz4`, a turn's trace (several KB of jsonb) is compressed with lz4 as it is written: with pglz that was
 * the largest single cost in Postgres's CPU per turn.
 */
export async function openPool(
  url: string,
  quotedSchema: string,
  {
    lz4,
    onQuery,
    statementTimeoutMs = STATEMENT_TIMEOUT_MS,
  }: { lz4: boolean; onQuery: ((sql: string) => void) | undefined; statementTimeoutMs?: number },
): Promise<postgres.Sql> {
  const options = connectionOptions(quotedSchema, onQuery);
  const connection = {
    ...options.connection,
    // No statement of a request holds a connection (and a backend) longer than this; migrations, on their own
    // connection, may take longer.
    statement_timeout: statementTimeoutMs,
    ...(lz4 ? { default_toast_compression: "lz4" } : {}),
  };
  const pool = postgres(url, { ...options, connection, max: POOL_SIZE });
  try {
    await pool`select 1`;
  } catch (error) {
    await pool.end({ timeout: 5 });
    throw error;
  }
  return pool;
}

/** Whether the server can compress TOAST values with lz4 (Postgres 14 or later, built with it). */
async function offersLz4(sql: postgres.Sql): Promise<boolean> {
  const rows = await sql`
    select 'lz4' = any(enumvals) as "lz4" from pg_settings where name = 'default_toast_compression'`;
  return rows[0]?.lz4 === true;
}
