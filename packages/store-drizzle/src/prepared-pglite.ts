import {
  Mutex,
  type ParserOptions,
  PGlite,
  parse,
  protocol,
  type QueryOptions,
  type Results,
  type Transaction,
} from "@electric-sql/pglite";

type BackendMessage = Parameters<typeof parse.parseResults>[0][number];

interface Prepared {
  name: string;
  /** The parameters' types as Postgres inferred them, which pick each value's serializer. */
  parameterTypes: readonly number[];
  /** The statement's row description, which `parse.parseResults` needs before the rows (none without rows). */
  rowDescription: BackendMessage | undefined;
}

/** More statement texts than the store sends: a bound on what ad-hoc texts keep prepared (the least recently used go). */
const MAX_PREPARED = 256;

/**
 * A PGlite whose `query` keeps each statement with parameters prepared. PGlite's own `query` sends every statement
 * unnamed, so Postgres parses and plans it again on every call, over six protocol exchanges: for the store's
 * statements of several data-modifying `WITH` parts, parsing and planning were most of a turn's time in PGlite.
 * Here a text's first call prepares it under a name, and each call binds and executes it in one message.
 *
 * On PGlite's public API only: `runExclusive` (documented for `execProtocol`), the messages made by its
 * `protocol.serialize` and the rows read by its `parse.parseResults`, as its `query` does. drizzle's PGlite driver
 * calls `query` and `transaction` and reads the results as before. Make one with `new` (`PGlite.create` makes a
 * plain PGlite) and await its `waitReady`.
 */
export class PreparedPglite extends PGlite {
  readonly #prepared = new Map<string, Prepared>();
  /**
   * PGlite's `runExclusive` keeps other statements out, not the next statements of a transaction another caller
   * has open: transactions and prepared statements take turns here, so one never runs inside the other.
   */
  readonly #turns = new Mutex();
  #names = 0;
  readonly #withParsers = new WeakMap<ParserOptions, PGlite["parsers"]>();

  override async transaction<T>(callback: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.#turns.runExclusive(() => super.transaction(callback));
  }

  // biome-ignore lint/suspicious/noExplicitAny: PGlite's own signature.
  override async query<T>(text: string, params: any[] = [], options?: QueryOptions): Promise<Results<T>> {
    // Statements without parameters (start-up, LISTEN, drizzle's `sql.raw`), blobs and typed parameters: as sent.
    if (
      params.length === 0 ||
      !this.ready ||
      options?.blob !== undefined ||
      options?.paramTypes !== undefined
    ) {
      return super.query<T>(text, params, options);
    }
    return this.#turns.runExclusive(() =>
      this.runExclusive(async () => {
        if (!this.ready) throw new Error("PGlite is closed");
        const statement = this.#recentlyUsed(text) ?? (await this.#prepare(text));
        const values = params.map((value, index) => {
          if (value === null || value === undefined) return null;
          const type = statement.parameterTypes[index] as number;
          const serializer = options?.serializers?.[type] ?? this.serializers[type];
          return serializer ? serializer(value) : String(value);
        });
        const { messages } = await this.execProtocol(
          Buffer.concat([
            protocol.serialize.bind({ statement: statement.name, values }),
            protocol.serialize.execute({}),
            protocol.serialize.sync(),
          ]),
          { onNotice: options?.onNotice },
        );
        const described =
          statement.rowDescription === undefined ? messages : [statement.rowDescription, ...messages];
        return parse.parseResults(described, this.#parsers(options), {
          rowMode: options?.rowMode,
        })[0] as Results<T>;
      }),
    );
  }

  /**
   * The parsers `options` gives over the instance's own. `parseResults` would copy every one of the instance's (one
   * for each type and array type, hundreds) into a new object on each call given `options.parsers`, as drizzle's
   * driver always gives them: that copy was a tenth of a turn's CPU. These look up the instance's through their
   * prototype instead, so they also see array types added later.
   */
  #parsers(options: QueryOptions | undefined): PGlite["parsers"] {
    const given = options?.parsers;
    if (given === undefined) return this.parsers;
    let parsers = this.#withParsers.get(given);
    if (parsers === undefined) {
      parsers = Object.assign(Object.create(this.parsers) as PGlite["parsers"], given);
      this.#withParsers.set(given, parsers);
    }
    return parsers;
  }

  /** `text`'s statement, moved to the end of the map: the map's first entry is the least recently used. */
  #recentlyUsed(text: string): Prepared | undefined {
    const statement = this.#prepared.get(text);
    if (statement !== undefined) {
      this.#prepared.delete(text);
      this.#prepared.set(text, statement);
    }
    return statement;
  }

  /** Parses `text` under a new name and learns its parameters' types and its rows' description. */
  async #prepare(text: string): Promise<Prepared> {
    if (this.#prepared.size >= MAX_PREPARED) {
      const [leastUsedText, leastUsed] = this.#prepared.entries().next().value as [string, Prepared];
      this.#prepared.delete(leastUsedText);
      await this.execProtocol(
        Buffer.concat([
          protocol.serialize.close({ type: "S", name: leastUsed.name }),
          protocol.serialize.sync(),
        ]),
      );
    }
    const name = `aptix_${++this.#names}`;
    const { messages } = await this.execProtocol(
      Buffer.concat([
        protocol.serialize.parse({ name, text }),
        protocol.serialize.describe({ type: "S", name }),
        protocol.serialize.sync(),
      ]),
    );
    const statement: Prepared = {
      name,
      parameterTypes: parse.parseDescribeStatementResults(messages),
      rowDescription: messages.find((message) => message.name === "rowDescription"),
    };
    this.#prepared.set(text, statement);
    return statement;
  }
}
