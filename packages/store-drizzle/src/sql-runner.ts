import { messages, type PGlite, parse, protocol } from "@electric-sql/pglite";
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
  transaction<T>(
    work: (run: RunStatement, commitWith: RunStatement) => Promise<T>,
    options?: TransactionOptions,
  ): Promise<T>;
}

export interface TransactionOptions {
  /**
   * False: the COMMIT answers before its WAL is flushed to disk (`synchronous_commit = off` for this
   * transaction alone). A crash of the database may then lose it, never corrupt anything, and any later
   * synchronous commit flushes it with its own. For writes nothing a client was told depends on until such a
   * commit. True unless given; PGlite ignores it.
   */
  synchronousCommit?: boolean;
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
    async transaction<T>(
      work: (run: RunStatement, commitWith: RunStatement) => Promise<T>,
      { synchronousCommit = true }: TransactionOptions = {},
    ): Promise<T> {
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
        // One simple-protocol message either way (no parameters): no round trip more.
        send(connection, synchronousCommit ? "begin" : "begin; set local synchronous_commit = off", []);
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

/** A hot statement prepared on one PGlite instance: its name, its parameters' types, its rows' columns. */
interface Prepared {
  name: string;
  paramTypes: number[];
  /** The name and type of each column its rows have, from the Describe; none for a statement without rows. */
  columns: { name: string; dataTypeID: number }[];
}

/**
 * Each PGlite instance's prepared statements by text, and the number of names given so far. Kept per instance
 * (one connection), not per runner: two stores opened in turn on one instance share them rather than prepare
 * again under a taken name, and they go with the instance when it is dropped.
 */
const preparedOn = new WeakMap<PGlite, { statements: Map<string, Prepared>; named: number }>();

const { serialize } = protocol;

/** One message of several frontend messages, for one `execProtocolStream` call. */
function joined(parts: Uint8Array[]): Uint8Array {
  const message = new Uint8Array(parts.reduce((length, part) => length + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    message.set(part, offset);
    offset += part.length;
  }
  return message;
}

/** Execute (the unnamed portal, every row) and Sync, as PGlite's `serialize` writes them. */
const EXECUTE_AND_SYNC = Buffer.from([0x45, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0x53, 0, 0, 0, 4]);

/**
 * Bind (the unnamed portal to `statement`, every parameter and column as text), Execute and Sync, in one buffer
 * sized once. PGlite's `serialize.bind` writes the same Bind through a writer that measures each value in a
 * JavaScript loop and grows and copies its buffer as it goes: with `parse.parseResults` reading the rows back,
 * about 7% of the serving process's CPU on a PGlite turn (docs/turn-cost.md).
 */
function bindExecuteSync(statement: string, values: readonly (string | null)[]): Uint8Array {
  const lengths = values.map((value) => (value === null ? -1 : Buffer.byteLength(value)));
  const valuesLength = lengths.reduce((sum, length) => sum + 4 + Math.max(length, 0), 0);
  // Its own length, the portal's and statement's names with their NULs, three counts, and the values.
  const bindLength = 4 + 1 + Buffer.byteLength(statement) + 1 + 2 + 2 + valuesLength + 2;
  const message = Buffer.allocUnsafe(1 + bindLength + EXECUTE_AND_SYNC.length);
  let offset = message.writeUInt8(0x42, 0);
  offset = message.writeInt32BE(bindLength, offset);
  offset = message.writeUInt8(0, offset); // the unnamed portal
  offset += message.write(statement, offset);
  offset = message.writeUInt8(0, offset);
  offset = message.writeInt16BE(0, offset); // no parameter format codes: all text
  offset = message.writeInt16BE(values.length, offset);
  values.forEach((value, index) => {
    offset = message.writeInt32BE(lengths[index] as number, offset);
    if (value !== null) offset += message.write(value, offset);
  });
  offset = message.writeInt16BE(0, offset); // no result format codes: all text
  EXECUTE_AND_SYNC.copy(message, offset);
  return message;
}

/**
 * A runner over a PGlite instance, reporting each statement (BEGIN and COMMIT included) to `onQuery`.
 *
 * `PGlite.query` parses, analyses and plans its statement anew on each call, over six protocol round trips.
 * Here each statement text is prepared once per instance (Parse and Describe of a named statement), and a run
 * is one message of Bind, Execute and Sync: parameters serialized and rows parsed with the instance's own
 * serializers and parsers, by the types the Describe answered, as `query` does (the message written by
 * `bindExecuteSync`, the rows read here); an ErrorResponse rejects with PGlite's DatabaseError, `query` and
 * `params` set as `query` sets them, and the Sync ends the cycle.
 */
export function pgliteRunner(client: PGlite, onQuery: (sql: string) => void = () => {}): SqlRunner {
  const prepared = preparedOn.get(client) ?? { statements: new Map(), named: 0 };
  preparedOn.set(client, prepared);

  const send = async (text: string, params: readonly unknown[], syncToFs: boolean) => {
    try {
      let statement = prepared.statements.get(text);
      if (statement === undefined) {
        // A name of its own even after a failed Parse or Describe: the statement may exist all the same.
        const name = `aptix_${++prepared.named}`;
        const described = await client.execProtocolStream(
          joined([
            serialize.parse({ name, text }),
            serialize.describe({ type: "S", name }),
            serialize.sync(),
          ]),
          { syncToFs: false },
        );
        const rowDescription = described.find(
          (message): message is messages.RowDescriptionMessage => message.name === "rowDescription",
        );
        statement = {
          name,
          paramTypes: parse.parseDescribeStatementResults(described),
          columns: (rowDescription?.fields ?? []).map(({ name, dataTypeID }) => ({ name, dataTypeID })),
        };
        prepared.statements.set(text, statement);
      }
      const { paramTypes, columns } = statement;
      const values = params.map((value, index) => {
        if (value == null) return null;
        const serializer = client.serializers[paramTypes[index] as number];
        return serializer ? serializer(value) : String(value);
      });
      const answer = await client.execProtocolStream(bindExecuteSync(statement.name, values), { syncToFs });
      const rows: Record<string, unknown>[] = [];
      for (const message of answer) {
        if (message.name !== "dataRow") continue;
        const row: Record<string, unknown> = {};
        (message as messages.DataRowMessage).fields.forEach((field, index) => {
          const { name, dataTypeID } = columns[index] as Prepared["columns"][number];
          const parser = client.parsers[dataTypeID];
          row[name] = field === null ? null : parser ? parser(field, dataTypeID) : field;
        });
        rows.push(row);
      }
      return rows;
    } catch (error) {
      if (error instanceof messages.DatabaseError) Object.assign(error, { query: text, params });
      throw error;
    }
  };
  return {
    // `execProtocolStream` takes none of PGlite's locks, and its public `runExclusive` only the query lock. A
    // statement alone takes both locks `query` takes: the transaction lock (held by a transaction from BEGIN to
    // COMMIT, so the statement never lands in someone else's) and the query lock (so it never interleaves with
    // another statement). Running it in a `transaction` instead would cost a BEGIN and a COMMIT more.
    run: async (text, params) => {
      onQuery(text);
      await client._checkReady();
      return client._runExclusiveTransaction(() => client.runExclusive(() => send(text, params, true)));
    },
    // PGlite runs in this process: nothing to pipeline, and it commits when `work` returns. Its transaction
    // holds the transaction lock; each statement takes the query lock and, as `Transaction.query`, does not
    // sync the file system.
    transaction: (work) =>
      client.transaction(async (tx) => {
        onQuery("BEGIN");
        const run: RunStatement = async (text, params) => {
          // Refused once the transaction has ended, as `Transaction.query` refuses: it would run unguarded.
          if (tx.closed) throw new Error("Transaction is closed");
          onQuery(text);
          return client.runExclusive(() => send(text, params, false));
        };
        try {
          const result = await work(run, run);
          onQuery("COMMIT");
          return result;
        } catch (error) {
          onQuery("ROLLBACK");
          throw error;
        }
      }),
  };
}
