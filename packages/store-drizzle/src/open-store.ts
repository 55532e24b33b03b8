import { fileURLToPath } from "node:url";
import {
  type Clock,
  type FileStore,
  type SessionStore,
  systemClock,
  type TurnEventLog,
  type WorkspaceIndex,
} from "@aptix/core";
import type { PGlite, QueryOptions, Transaction } from "@electric-sql/pglite";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { bigint, pgTable, serial, text } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { createPglite } from "./create-pglite.js";
import { DrizzleFileStore } from "./drizzle-file-store.js";
import { DrizzleSessionStore, type StoreDatabase } from "./drizzle-session-store.js";
import { DrizzleTurnEventLog, type ListenToChannel } from "./drizzle-turn-event-log.js";
import { DrizzleWorkspaceIndex } from "./drizzle-workspace-index.js";
import { pgliteRunner, postgresRunner, type SqlRunner } from "./sql-runner.js";
import { reportingUnavailability } from "./store-unavailable.js";
import { enableVectorExtension } from "./vector-extension.js";

export interface StoreOptions {
  /** The Postgres schema of every table and of drizzle's migrations table; created if missing. Default `aptix`. */
  schema?: string;
  /** Stamps `updatedAt` on writes that are not given a time, and judges file expiry. Default: the system clock. */
  clock?: Clock;
  /**
   * Judges session leases in place of the database's `now()`. For tests that move time by hand only: server
   * instances agree on leases only through the database's clock, so leave it unset in a deployment.
   */
  leaseClock?: Clock;
  /** Called once per SQL statement sent (BEGIN and COMMIT included), e.g. for tests that count statements. */
  onQuery?: (sql: string) => void;
  /**
   * PGlite only: Postgres settings the embedded database starts with, over `PGLITE_SETTINGS` (e.g.
   * `{ shared_buffers: "64MB" }`). Ignored on Postgres and by `openPgliteStore`.
   */
  pgliteSettings?: Readonly<Record<string, string>>;
  /**
   * Stores embeddings for vector search (docs/knowledge.md): opening creates pgvector's `vector` extension when
   * missing, and fails with an error naming it when the database cannot provide it. An embedded PGlite loads
   * its bundled pgvector; a PGlite passed to `openPgliteStore` must have been created with it.
   */
  vectors?: boolean;
}

export interface Readiness {
  ready: boolean;
  /** Why the store is not ready; absent when it is. */
  reason?: string;
}

export interface AptixStore {
  sessions: SessionStore;
  files: FileStore;
  /** Streamed text deltas, so a client can resume a stream on any instance. */
  events: TurnEventLog;
  /** Pushed workspace documents, chunked and indexed for retrieval. */
  workspaceIndex: WorkspaceIndex;
  /** Ready when the database answers and every migration this package ships is applied. */
  readiness(): Promise<Readiness>;
  /** Closes what `openStore` opened; the store answers no more calls. Safe to call twice. */
  close(): Promise<void>;
}

export const DEFAULT_SCHEMA = "aptix";
/** drizzle's migrations table, kept in the store's schema. */
export const MIGRATIONS_TABLE = "__drizzle_migrations";
/** The migrations drizzle-kit generated from `schema.ts` (`drizzle/` at the package root, beside `src/` and `dist/`). */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL("../drizzle/", import.meta.url));

/**
 * Connections of one store's postgres.js pool. Few on purpose: once every connection is busy, postgres.js
 * pipelines further statements onto them, and a backend then takes several in one read and answers them in one
 * write, rather than each being a wake-up of a backend of its own. With 16 clients on a 2-core machine, 3 or 4
 * connections against postgres.js's default of 10 cut Postgres's CPU per turn by about a fifth
 * (docs/turn-cost.md).
 */
const POOL_SIZE = 4;
/**
 * How long a connection waits before connecting again after its pool's `failures` connection errors, in seconds.
 * postgres.js's own delay grows to 20 s, and a request waits it out on its connection: in an outage, requests
 * took seconds to be refused, and after it, to be served again. Half a second at most here; jittered, so the
 * pool's connections do not all try at once.
 */
function reconnectDelaySeconds(failures: number): number {
  return (0.5 + Math.random() / 2) * Math.min(0.025 * 2 ** failures, 0.5);
}
/** How long a readiness probe waits for the database. */
const READINESS_TIMEOUT_MS = 5_000;
/** First key of the advisory lock that serializes migrations of one schema across processes ("Aptx"). */
const MIGRATION_LOCK_CLASS = 0x41707478;
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * Opens the store behind `databaseUrl` and applies every pending migration before it resolves:
 * `postgres://…` or `postgresql://…` is a Postgres server (postgres.js, a pool of 4), `memory://` an
 * in-memory PGlite, and anything else a directory for an on-disk PGlite (created if missing).
 */
export async function openStore(databaseUrl: string, options: StoreOptions = {}): Promise<AptixStore> {
  schemaName(options); // Refuse a bad schema name before opening anything.
  if (/^postgres(ql)?:\/\//i.test(databaseUrl)) return openPostgresStore(databaseUrl, options);
  const client = await createPglite(databaseUrl, options.pgliteSettings, {
    vectors: options.vectors ?? false,
  });
  try {
    const store = await openPgliteStore(client, options);
    return {
      ...store,
      close: once(async () => {
        await store.close();
        await client.close();
      }),
    };
  } catch (error) {
    await client.close();
    throw error;
  }
}

/**
 * Opens a store over a PGlite instance the caller owns (and closes: the store's `close()` leaves it open).
 * PGlite has one connection: the store sets its `search_path` to `options.schema`, so keep one store per
 * instance open at a time.
 */
export async function openPgliteStore(client: PGlite, options: StoreOptions = {}): Promise<AptixStore> {
  const schema = schemaName(options);
  const counted = options.onQuery === undefined ? client : countingPglite(client, options.onQuery);
  await counted.exec(
    `create schema if not exists ${quoteIdentifier(schema)}; set search_path to ${quoteIdentifier(schema)}`,
  );
  const db = drizzlePglite(counted);
  await migratePglite(db, migrationConfig(schema));
  const vectorSchema = await vectorSchemaFor(db, options);
  let closed = false;
  return assemble(
    db,
    pgliteRunner(client, options.onQuery),
    options,
    vectorSchema,
    () => closed,
    async () => {
      closed = true;
    },
  );
}

async function openPostgresStore(url: string, options: StoreOptions): Promise<AptixStore> {
  const schema = schemaName(options);
  const { onQuery } = options;
  const clientOptions = {
    // Unqualified table names resolve to the store's schema on every connection.
    connection: { search_path: quoteIdentifier(schema) },
    // postgres.js's array type lookup, once per new connection (10 KB read) stays on: without it a `reserve()`
    // on a cold connection never settles (postgres.js 3.4.9, porsager/postgres#751), and the hot path's
    // transactions run on reserved connections (`postgresRunner`).
    onnotice: () => {},
    backoff: reconnectDelaySeconds,
    ...(onQuery === undefined ? {} : { debug: (_connection: number, query: string) => onQuery(query) }),
  };

  // Migrate on a connection of its own, under an advisory lock, so instances starting together migrate once.
  const migrator = postgres(url, { ...clientOptions, max: 1 });
  let vectorSchema: string | undefined;
  let lz4 = false;
  try {
    await migrator`select pg_advisory_lock(${MIGRATION_LOCK_CLASS}, hashtext(${schema}))`;
    await migrator.unsafe(`create schema if not exists ${quoteIdentifier(schema)}`);
    await migratePostgres(drizzlePostgres(migrator), migrationConfig(schema));
    vectorSchema = await vectorSchemaFor(drizzlePostgres(migrator), options);
    lz4 = await offersLz4(migrator);
    await migrator`select pg_advisory_unlock(${MIGRATION_LOCK_CLASS}, hashtext(${schema}))`;
  } finally {
    await migrator.end({ timeout: 5 });
  }

  // A turn's trace (its LLM call's requests and responses, several KB of jsonb) is compressed as it is written:
  // with pglz that was the largest single cost in Postgres's CPU per turn; lz4 does it at a fraction.
  const connection = { ...clientOptions.connection, ...(lz4 ? { default_toast_compression: "lz4" } : {}) };
  const pool = postgres(url, { ...clientOptions, connection, max: POOL_SIZE });
  let closed = false;
  // drizzle first: it sets the pool's parsers and serializers, which the runner's statements then share.
  const db = drizzlePostgres(pool);
  // The pool's first connection (and its type lookup) is opened here, not by the first request.
  try {
    await pool`select 1`;
  } catch (error) {
    await pool.end({ timeout: 5 });
    throw error;
  }
  // postgres.js listens on a connection of its own, beside the pool.
  const listen: ListenToChannel = async (channel, onPayload) =>
    (await pool.listen(channel, onPayload)).unlisten;
  return assemble(
    db,
    postgresRunner(pool),
    { ...options, listen },
    vectorSchema,
    () => closed,
    async () => {
      closed = true;
      await pool.end({ timeout: 5 });
    },
  );
}

/** Whether the server can compress TOAST values with lz4 (Postgres 14 or later, built with it). */
async function offersLz4(sql: postgres.Sql): Promise<boolean> {
  const rows = await sql`
    select 'lz4' = any(enumvals) as "lz4" from pg_settings where name = 'default_toast_compression'`;
  return rows[0]?.lz4 === true;
}

function assemble(
  db: StoreDatabase,
  runner: SqlRunner,
  options: StoreOptions & { listen?: ListenToChannel },
  vectorSchema: string | undefined,
  isClosed: () => boolean,
  close: () => Promise<void>,
): AptixStore {
  const clock = options.clock ?? systemClock;
  const expected = readMigrationFiles(migrationConfig(schemaName(options)));
  // An unreachable database (or a closed store) throws core's StoreUnavailableError: NOT_READY, not INTERNAL.
  return {
    sessions: reportingUnavailability(
      new DrizzleSessionStore(
        db,
        runner,
        clock,
        options.leaseClock === undefined ? {} : { leaseClock: options.leaseClock },
      ),
      isClosed,
    ),
    files: reportingUnavailability(new DrizzleFileStore(db, clock), isClosed),
    events: reportingUnavailability(
      new DrizzleTurnEventLog(
        db,
        options.listen === undefined ? undefined : { schema: schemaName(options), listen: options.listen },
      ),
      isClosed,
    ),
    workspaceIndex: reportingUnavailability(
      new DrizzleWorkspaceIndex(db, { clock, ...(vectorSchema === undefined ? {} : { vectorSchema }) }),
      isClosed,
    ),
    async readiness() {
      if (isClosed()) return { ready: false, reason: "The store is closed." };
      try {
        const applied = await withTimeout(
          db.select({ createdAt: migrationsTable.createdAt }).from(migrationsTable),
          READINESS_TIMEOUT_MS,
          `The database did not answer within ${READINESS_TIMEOUT_MS} ms.`,
        );
        const appliedAt = new Set(applied.map((row) => Number(row.createdAt)));
        const pending = expected.filter((migration) => !appliedAt.has(migration.folderMillis));
        if (pending.length > 0) {
          return {
            ready: false,
            reason: `${pending.length} of ${expected.length} database migrations are not applied.`,
          };
        }
        return { ready: true };
      } catch (error) {
        return { ready: false, reason: `The database is unreachable: ${messageOf(error)}` };
      }
    },
    close: once(close),
  };
}

/**
 * With `options.vectors`, the schema of pgvector's `vector` extension, created when missing; else undefined.
 * Fails naming the extension when the database cannot provide it, so a deployment configured for embeddings
 * stops at start-up rather than at its first search.
 */
async function vectorSchemaFor(db: StoreDatabase, options: StoreOptions): Promise<string | undefined> {
  if (options.vectors !== true) return undefined;
  try {
    return await enableVectorExtension(db);
  } catch (error) {
    throw new Error(
      `Embeddings need the Postgres extension "vector" (pgvector), which this database cannot provide: ${messageOf(error)}. Install pgvector on the database server, or configure no embedding model.`,
      { cause: error },
    );
  }
}

/** drizzle's migrations table, read unqualified: the connection's search_path is the store's schema. */
const migrationsTable = pgTable(MIGRATIONS_TABLE, {
  id: serial("id").primaryKey(),
  hash: text("hash").notNull(),
  createdAt: bigint("created_at", { mode: "number" }),
});

function migrationConfig(schema: string) {
  return { migrationsFolder: MIGRATIONS_FOLDER, migrationsSchema: schema, migrationsTable: MIGRATIONS_TABLE };
}

function schemaName(options: StoreOptions): string {
  const schema = options.schema ?? DEFAULT_SCHEMA;
  if (!SCHEMA_NAME.test(schema)) {
    throw new Error(
      `Invalid store schema ${JSON.stringify(schema)}: use 1-63 letters, digits and underscores, not starting with a digit.`,
    );
  }
  return schema;
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The PGlite calls drizzle makes (`query`, `exec`, `transaction`), reporting each statement to `onQuery`.
 * PGlite sends BEGIN and COMMIT/ROLLBACK itself, so those are reported around the transaction's callback.
 */
function countingPglite(client: PGlite, onQuery: (sql: string) => void): PGlite {
  const counted = (target: Pick<PGlite, "query" | "exec">) => ({
    query: <T>(query: string, params?: unknown[], options?: QueryOptions) => {
      onQuery(query);
      return target.query<T>(query, params, options);
    },
    exec: (query: string, options?: QueryOptions) => {
      onQuery(query);
      return target.exec(query, options);
    },
  });
  const wrapper = {
    ...counted(client),
    transaction: <T>(callback: (tx: Transaction) => Promise<T>) =>
      client.transaction(async (tx) => {
        onQuery("BEGIN");
        const countedTx: Transaction = {
          ...counted(tx),
          sql: (strings, ...params) => tx.sql(strings, ...params),
          rollback: () => tx.rollback(),
          listen: (channel, callback) => tx.listen(channel, callback),
          get closed() {
            return tx.closed;
          },
        };
        try {
          const result = await callback(countedTx);
          onQuery("COMMIT");
          return result;
        } catch (error) {
          onQuery("ROLLBACK");
          throw error;
        }
      }),
  };
  return wrapper as unknown as PGlite;
}

function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= close();
    return closing;
  };
}

async function withTimeout<T>(work: PromiseLike<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The driver's own message: drizzle wraps driver errors in a "Failed query" error whose `cause` says why. */
function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? messageOf(error.cause) : error.message;
}
