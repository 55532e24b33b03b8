import type { PGlite, Transaction } from "@electric-sql/pglite";
import type { Sql } from "postgres";

/** Sends one statement with its parameters and answers its rows as objects keyed by column name. */
export type RunStatement = (text: string, params: readonly unknown[]) => Promise<Record<string, unknown>[]>;

/**
 * The driver under drizzle, for the store's hot path: fixed statement texts sent as they are (postgres.js
 * prepares each once per connection; PGlite has one connection), so no SQL is built per call.
 */
export interface SqlRunner {
  run: RunStatement;
  /** Runs `work` in one transaction (BEGIN … COMMIT, ROLLBACK when it throws) on one connection. */
  transaction<T>(work: (run: RunStatement) => Promise<T>): Promise<T>;
}

/** A runner over a postgres.js pool: every statement named and prepared by postgres.js. */
export function postgresRunner(sql: Sql): SqlRunner {
  const runOn =
    (client: Sql): RunStatement =>
    (text, params) =>
      client.unsafe(text, params as never[], { prepare: true }) as unknown as Promise<
        Record<string, unknown>[]
      >;
  return {
    run: runOn(sql),
    transaction: <T>(work: (run: RunStatement) => Promise<T>) =>
      sql.begin((tx) => work(runOn(tx as unknown as Sql))) as Promise<T>,
  };
}

/** A runner over a PGlite instance (or one that counts its statements: see `openPgliteStore`). */
export function pgliteRunner(client: Pick<PGlite, "query" | "transaction">): SqlRunner {
  const runOn =
    (target: Pick<Transaction, "query">): RunStatement =>
    async (text, params) =>
      (await target.query<Record<string, unknown>>(text, params as unknown[])).rows;
  return {
    run: runOn(client),
    transaction: (work) => client.transaction((tx) => work(runOn(tx))),
  };
}
