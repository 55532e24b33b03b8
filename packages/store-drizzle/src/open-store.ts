import {
  type Clock,
  type FileStore,
  type SessionStores,
  systemClock,
  type TurnEventLog,
  type WorkspaceIndex,
} from "@aptix/core";
import type { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { createPglite } from "./create-pglite.js";
import { DeploymentSecrets } from "./domains/deployment-secrets.js";
import { DrizzleTurnEventLog, type ListenToChannel } from "./domains/events.js";
import { DrizzleFileStore } from "./domains/files.js";
import type { StoreDatabase } from "./domains/rows.js";
import { DrizzleWorkspaceIndex } from "./domains/workspaces/index.js";
import { drizzleSessionStores } from "./drizzle-session-stores.js";
import { type Readiness, readinessProbe } from "./health.js";
import { migrationConfig } from "./migrations.js";
import { migratePostgres, openPool, POOL_SIZE } from "./postgres-pool.js";
import { type StoreStep, timedStep } from "./store-step.js";
import { type CallsInFlight, reportingUnavailability } from "./store-unavailable.js";
import { enableVectorExtension } from "./vector-extension.js";

export type { Readiness } from "./health.js";
export { MIGRATIONS_FOLDER, MIGRATIONS_TABLE } from "./migrations.js";
export type { StoreStep } from "./store-step.js";

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
  /**
   * Called once per SQL statement sent, e.g. for tests that count statements: on Postgres every statement
   * postgres.js sends (BEGIN and COMMIT included); on PGlite every statement drizzle sends (its `logger`),
   * without the BEGIN and COMMIT that PGlite's `transaction` sends itself.
   */
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
  /** Told of each step of opening (creating a new embedded database, starting it, migrating), for start-up lines. */
  onStep?: (step: StoreStep) => void;
  /** Told of what the store ignored and an operator should know of (a notification it did not understand). */
  onWarning?: (message: string, detail: Record<string, unknown>) => void;
}

export interface AptixStore {
  /** Sessions, one store per domain. */
  sessions: SessionStores;
  files: FileStore;
  /** Streamed text deltas, so a client can resume a stream on any instance. */
  events: TurnEventLog;
  /** Pushed workspace documents, chunked and indexed for retrieval. */
  workspaceIndex: WorkspaceIndex;
  /** Ready when the database answers and every migration this package ships is applied. */
  readiness(): Promise<Readiness>;
  /**
   * Whether the store hears other instances' notifications (cancels, stream wakeups): each call sends one to
   * itself and answers whether the previous call's arrived (see `DrizzleTurnEventLog.listenerHeard`). When it
   * does not, cancels and followers still work, by polling. Always true on PGlite.
   */
  listenerHeard(): Promise<boolean>;
  /**
   * The connections of the store's pool busy now: its calls waiting on the database, at most the pool's size
   * (4 on Postgres, 1 on PGlite); a call beyond that waits for a connection. For a metrics gauge.
   */
  poolInUse(): number;
  /**
   * The secret named `name` (32 random bytes), made on first use and kept in the database, so every instance on
   * it answers the same: the prompt-cache key's when the deployment configures none.
   */
  deploymentSecret(name: string): Promise<Uint8Array>;
  /** Closes what `openStore` opened; the store answers no more calls. Safe to call twice. */
  close(): Promise<void>;
}

export const DEFAULT_SCHEMA = "aptix";
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
    onStep: options.onStep,
  });
  try {
    await timedStep(options.onStep, "open", () => client.waitReady);
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
  const { onQuery } = options;
  const db = drizzlePglite(
    client,
    onQuery === undefined ? {} : { logger: { logQuery: (query) => onQuery(query) } },
  );
  await timedStep(options.onStep, "migrate", async () => {
    await client.exec(
      `create schema if not exists ${quoteIdentifier(schema)}; set search_path to ${quoteIdentifier(schema)}`,
    );
    await migratePglite(db, migrationConfig(schema));
  });
  const vectorSchema = options.vectors === true ? await enableVectorExtension(db) : undefined;
  let closed = false;
  return assemble(
    db,
    { ...options, vectorSchema },
    {
      poolSize: 1,
      isClosed: () => closed,
      close: async () => {
        closed = true;
      },
    },
  );
}

async function openPostgresStore(url: string, options: StoreOptions): Promise<AptixStore> {
  const schema = schemaName(options);
  const quoted = quoteIdentifier(schema);
  const { vectorSchema, lz4 } = await timedStep(options.onStep, "migrate", () =>
    migratePostgres(url, schema, quoted, { vectors: options.vectors === true, onQuery: options.onQuery }),
  );
  const pool = await openPool(url, quoted, { lz4, onQuery: options.onQuery });
  // postgres.js listens on a connection of its own, beside the pool.
  const listen: ListenToChannel = async (channel, onPayload) =>
    (await pool.listen(channel, onPayload)).unlisten;
  let closed = false;
  return assemble(
    drizzlePostgres(pool),
    { ...options, vectorSchema, listen },
    {
      poolSize: POOL_SIZE,
      isClosed: () => closed,
      close: async () => {
        closed = true;
        await pool.end({ timeout: 5 });
      },
    },
  );
}

/**
 * The store's parts over `db`, each method's failure to reach the database (or a call on a closed store)
 * thrown as core's StoreUnavailableError: NOT_READY, not INTERNAL.
 */
function assemble(
  db: StoreDatabase,
  options: StoreOptions & { vectorSchema: string | undefined; listen?: ListenToChannel },
  { poolSize, isClosed, close }: { poolSize: number; isClosed: () => boolean; close: () => Promise<void> },
): AptixStore {
  const schema = schemaName(options);
  const clock = options.clock ?? systemClock;
  const { leaseClock, vectorSchema, listen, onWarning } = options;
  const inFlight: CallsInFlight = { count: 0 };
  const reporting = <T extends object>(part: T) => reportingUnavailability(part, isClosed, inFlight);
  const events = new DrizzleTurnEventLog(
    db,
    listen === undefined ? undefined : { schema, listen, ...(onWarning === undefined ? {} : { onWarning }) },
  );
  const secrets = reporting(new DeploymentSecrets(db, clock));
  return {
    sessions: reportingEach(
      drizzleSessionStores(db, { clock, ...(leaseClock === undefined ? {} : { leaseClock }) }),
      reporting,
    ),
    files: reporting(new DrizzleFileStore(db, clock)),
    events: reporting(events),
    listenerHeard: () => events.listenerHeard(),
    workspaceIndex: reporting(
      new DrizzleWorkspaceIndex(db, { clock, ...(vectorSchema === undefined ? {} : { vectorSchema }) }),
    ),
    deploymentSecret: (name) => secrets.secret(name),
    readiness: readinessProbe(db, schema, isClosed),
    poolInUse: () => Math.min(inFlight.count, poolSize),
    close: once(close),
  };
}

/** Each store of `stores` wrapped by `wrap`. */
function reportingEach(stores: SessionStores, wrap: <T extends object>(part: T) => T): SessionStores {
  return {
    turns: wrap(stores.turns),
    transcripts: wrap(stores.transcripts),
    directory: wrap(stores.directory),
    usage: wrap(stores.usage),
    webhooks: wrap(stores.webhooks),
  };
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

function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= close();
    return closing;
  };
}
