import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { PreparedPglite } from "../../src/index.js";

/** The Postgres the store tests run against; every test works in a schema of its own. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

const START_HINT = "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start";

/** A fresh schema name, so parallel runs and tests never share tables. */
export function randomSchema(): string {
  return `aptix_test_${randomBytes(6).toString("hex")}`;
}

let admin: postgres.Sql | undefined;

/** A small client for setup and cleanup; fails loudly, never skips, when Postgres is down. */
export async function adminSql(): Promise<postgres.Sql> {
  if (admin !== undefined) return admin;
  const client = postgres(TEST_DATABASE_URL, { max: 2, connect_timeout: 5, onnotice: () => {} });
  try {
    await client`select 1`;
  } catch (error) {
    await client.end({ timeout: 1 });
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(
      `Postgres is not reachable at ${TEST_DATABASE_URL} (${message}). These tests need it: start it with \`${START_HINT}\` (or set TEST_DATABASE_URL).`,
    );
  }
  admin = client;
  return client;
}

export async function dropSchema(schema: string): Promise<void> {
  const sql = await adminSql();
  await sql.unsafe(`drop schema if exists "${schema}" cascade`);
}

export async function closeAdmin(): Promise<void> {
  await admin?.end({ timeout: 5 });
  admin = undefined;
}

/** A new in-memory PGlite keeping statements prepared, as `openStore("memory://")` makes, once started. */
export async function startedPglite(): Promise<PreparedPglite> {
  const database = new PreparedPglite();
  await database.waitReady;
  return database;
}
