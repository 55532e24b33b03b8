import type { PGlite, Transaction } from "@electric-sql/pglite";
import type { Sql } from "postgres";

/**
 * Sends one statement with its parameters and answers its rows as objects keyed by column name. Statements
 * sent without awaiting the one before go together (postgres.js pipelines them on the connection): one round
 * trip, run in the order sent.
 */
export type RunStatement = (text: string, params: readonly unknown[]) => Promise<Record<string, unknown>[]>;

/**
 * The driver under drizzle, for the store's hot path: fixed statement texts sent as they are (postgres.js
 * prepares each once per connection; PGlite has one connection), so no SQL is built per call.
 */
export interface SqlRunner {
  run: RunStatement;
  /**
   * Runs `work` in one transaction (BEGIN … COMMIT, ROLLBACK when it throws) on one connection. `run` sends a
   * statement in it (the first goes with the BEGIN); `commitWith` sends `work`'s last statement together with
   * the COMMIT, and ends the transaction: `work` sends nothing after it.
   */
  transaction<T>(work: (run: RunStatement, commitWith: RunStatement) => Promise<T>): Promise<T>;
}

/** Answers nothing: marks a pipelined statement's failure as handled, for whoever awaits it. */
const handled = () => {};

/**
 * A runner over a postgres.js pool: every statement named and prepared by postgres.js. A transaction runs on
 * a reserved connection, its BEGIN sent with its first statement and its COMMIT with its last, so a
 * transaction of a read, a write and a final write costs two round trips, not five.
 */
export function postgresRunner(sql: Sql): SqlRunner {
  const send = (client: Sql, text: string, params: readonly unknown[]) => {
    const query = client.unsafe(text, params as never[], { prepare: true });
    query.catch(handled); // sends it now (postgres.js sends a query once something awaits it)
    return query as unknown as Promise<Record<string, unknown>[]>;
  };
  const runOn =
    (client: Sql): RunStatement =>
    (text, params) =>
      send(client, text, params);
  return {
    run: runOn(sql),
    async transaction<T>(work: (run: RunStatement, commitWith: RunStatement) => Promise<T>): Promise<T> {
      const connection = await sql.reserve();
      let ended = false;
      const commitWith: RunStatement = (text, params) => {
        ended = true;
        const last = send(connection, text, params);
        // After a failed statement, Postgres answers the COMMIT by rolling back.
        const answer = Promise.all([last, send(connection, "commit", [])]).then(([rows]) => rows);
        answer.catch(handled);
        return answer;
      };
      try {
        send(connection, "begin", []);
        const result = await work(runOn(connection), commitWith);
        if (!ended) await send(connection, "commit", []);
        connection.release();
        return result;
      } catch (error) {
        // A connection that cannot roll back is closed, and postgres.js has taken it back already.
        const live = await send(connection, "rollback", []).then(
          () => true,
          () => false,
        );
        if (live) connection.release();
        throw error;
      }
    },
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
    // PGlite runs in this process: nothing to pipeline, and it commits when `work` returns.
    transaction: (work) =>
      client.transaction((tx) => {
        const run = runOn(tx);
        return work(run, run);
      }),
  };
}
