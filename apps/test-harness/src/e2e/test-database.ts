import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";

export type TestStoreKind = "pglite" | "postgres";

/** Every scenario runs on both stores. */
export const E2E_STORES: readonly TestStoreKind[] = ["pglite", "postgres"];

/** The machine's Postgres: `TEST_DATABASE_URL`, else the local server's `test` database. */
const POSTGRES_URL = process.env.TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";

export interface TestDatabase {
  kind: TestStoreKind;
  /** `DATABASE_URL`. */
  url: string;
  /** Postgres only: the schema of this database's tables, unique to it. */
  schema?: string;
  /** The server environment that selects this database (`DATABASE_URL`, `APTIX_DATABASE_SCHEMA`). */
  env: Record<string, string>;
  /** Drops what it made (the Postgres schema). Safe to call twice. */
  dispose(): Promise<void>;
}

/**
 * A database for one test service: PGlite in memory, or a schema of its own on the machine's Postgres, so
 * runs (and test files running at once) never see each other's rows. The schema is dropped on dispose.
 */
export async function databaseFor(kind: TestStoreKind): Promise<TestDatabase> {
  if (kind === "pglite") {
    return { kind, url: "memory://", env: { DATABASE_URL: "memory://" }, dispose: async () => {} };
  }
  const schema = `aptix_e2e_${randomBytes(6).toString("hex")}`;
  let disposed: Promise<void> | undefined;
  return {
    kind,
    url: POSTGRES_URL,
    schema,
    env: { DATABASE_URL: POSTGRES_URL, APTIX_DATABASE_SCHEMA: schema },
    dispose() {
      disposed ??= dropSchema(POSTGRES_URL, schema);
      return disposed;
    },
  };
}

type Sql = ((strings: TemplateStringsArray, ...values: unknown[]) => Promise<unknown>) & {
  unsafe(query: string): Promise<unknown>;
  end(options?: { timeout?: number }): Promise<void>;
};

/**
 * postgres.js as `@aptix/store-drizzle` resolves it: the store owns the Postgres driver, so the harness
 * borrows it (for cleanup, and for tests that read or age rows) rather than depending on a copy of its own.
 */
export function postgresDriver(): (url: string, options: Record<string, unknown>) => Sql {
  const fromStore = createRequire(
    createRequire(import.meta.url).resolve("@aptix/store-drizzle/package.json"),
  );
  return fromStore("postgres") as (url: string, options: Record<string, unknown>) => Sql;
}

async function dropSchema(url: string, schema: string): Promise<void> {
  const sql = postgresDriver()(url, { max: 1, onnotice: () => {}, fetch_types: false });
  try {
    await sql.unsafe(`drop schema if exists "${schema}" cascade`);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
