import type { AgentService, ToolDefinition } from "@aptix/core";
import { type ScriptedAnswer, ScriptedLlmProvider } from "@aptix/core/testing";
import { afterAll, describe, expect, it } from "vitest";
import { type AptixStore, MIGRATIONS_TABLE, openStore } from "../src/index.js";
import { adminSql, closeAdmin, dropSchema, randomSchema, TEST_DATABASE_URL } from "./support/databases.js";
import { plainService } from "./support/plain-service.js";

afterAll(async () => {
  await closeAdmin();
});

/** The turn whose cost must still be the first turns' (docs/turn-cost.md). */
const LAST_TURN = 1_000;

/** A client tool the provider may ask for: a turn that does ends awaiting its result. */
const READ_FILE: ToolDefinition = {
  name: "read_file",
  description: "Reads a file of the workspace.",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};

/** What one plain turn cost Postgres: commits and statements sent, rows read per table and index. */
interface TurnCost {
  commits: number;
  statements: string[];
  /** `table` → seq_tup_read + idx_tup_fetch; `table.index` → idx_tup_read. */
  rowsRead: Record<string, number>;
}

/**
 * A session of plain turns (one LLM call, no tools) on Postgres, in a schema of its own. Each measured turn runs
 * on a store of its own opened for it alone, closed before and after: a closing connection's backend hands its
 * statistics in before it leaves `pg_stat_activity`, so the counters read then are complete.
 */
class PlainTurns {
  readonly schema = randomSchema();
  readonly #provider = new ScriptedLlmProvider({ id: "scripted" });
  #turns = 0;

  /** The store's connections, named so the test can wait for them to be gone. */
  get #url(): string {
    const url = new URL(TEST_DATABASE_URL);
    url.searchParams.set("application_name", this.schema);
    return url.toString();
  }

  /** Runs `count` more turns, on one store. */
  async run(count: number): Promise<void> {
    await this.#withStore(undefined, async (service) => {
      for (let turn = 0; turn < count; turn++) await this.#turn(service);
    });
  }

  /** Runs one more step and answers what it cost: `step` runs it, a plain user turn unless given. */
  async measure(step = (service: AgentService) => this.#turn(service)): Promise<TurnCost> {
    const statements: string[] = [];
    const before = await this.#rowsRead();
    await this.#withStore(statements, step);
    const after = await this.#rowsRead();
    const rowsRead = Object.fromEntries(
      Object.entries(after).map(([name, count]) => [name, count - (before[name] ?? 0)]),
    );
    // The instance's LISTEN for cancels, sent once as its service starts, on a connection of its own: not the turn's.
    const turns = statements.filter((text) => !text.startsWith("listen "));
    return { commits: commitsOf(turns), statements: turns, rowsRead };
  }

  /** Runs a user turn that asks the client for READ_FILE, then its continuation: what each cost. */
  async measureClientTools(): Promise<{ asking: TurnCost; continuation: TurnCost }> {
    const toolCallId = `call-${this.#turns + 1}`;
    const asking = await this.measure((service) =>
      this.#turn(service, {
        toolCalls: [{ name: READ_FILE.name, arguments: { path: "a.ts" }, callId: toolCallId }],
      }),
    );
    const request = {
      sessionId: "long-session",
      turnId: `turn-${this.#turns}`,
      toolResults: [{ toolCallId, executionMs: 1, resultJson: '"export {};"' }],
    };
    const continuation = await this.measure(async (service) => {
      this.#provider.enqueue({ text: "Read it." });
      // As the HTTP route runs it.
      const handled = await service.handle(request, "principal-a");
      if (handled.type !== "answer" || !handled.result.successful) {
        throw new Error(`the continuation failed: ${JSON.stringify(handled)}`);
      }
      expect(handled.result.result).toMatchObject({ kind: "final", primaryOutputText: "Read it." });
    });
    return { asking, continuation };
  }

  async #turn(service: AgentService, answer?: ScriptedAnswer): Promise<void> {
    this.#turns++;
    this.#provider.enqueue(answer ?? { text: `Answer ${this.#turns}.` });
    const result = await service.execute(
      { sessionId: "long-session", turnId: `turn-${this.#turns}`, instruction: `Question ${this.#turns}?` },
      "principal-a",
    );
    if (!result.successful) throw new Error(`turn ${this.#turns} failed: ${JSON.stringify(result.errors)}`);
  }

  async #withStore(
    statements: string[] | undefined,
    work: (service: AgentService) => Promise<void>,
  ): Promise<void> {
    const store: AptixStore = await openStore(this.#url, {
      schema: this.schema,
      ...(statements ? { onQuery: (sql: string) => statements.push(sql) } : {}),
    });
    try {
      const service = plainService(store, this.#provider, { clientTools: [READ_FILE] });
      // Opening the store reads the migrations table only: statements from here on are the turn's.
      statements?.splice(0);
      await work(service);
    } finally {
      await store.close();
      await this.#backendsGone();
    }
  }

  async #backendsGone(): Promise<void> {
    const sql = await adminSql();
    for (;;) {
      const [row] =
        await sql`select count(*)::int as n from pg_stat_activity where application_name = ${this.schema}`;
      if (row?.n === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async #rowsRead(): Promise<Record<string, number>> {
    const sql = await adminSql();
    await sql`select pg_stat_clear_snapshot()`;
    const tables = await sql`
      select relname, coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) as n
      from pg_stat_user_tables where schemaname = ${this.schema} and relname <> ${MIGRATIONS_TABLE}`;
    const indexes = await sql`
      select relname, indexrelname, idx_tup_read as n
      from pg_stat_user_indexes where schemaname = ${this.schema} and relname <> ${MIGRATIONS_TABLE}`;
    return Object.fromEntries([
      ...tables.map((row) => [row.relname, Number(row.n)]),
      ...indexes.map((row) => [`${row.relname}.${row.indexrelname}`, Number(row.n)]),
    ]);
  }

  /** `n_tup_upd` of the sessions table so far. */
  async sessionUpdates(): Promise<{ updates: number }> {
    const sql = await adminSql();
    await sql`select pg_stat_clear_snapshot()`;
    const [row] = await sql`
      select n_tup_upd::int as updates
      from pg_stat_user_tables where schemaname = ${this.schema} and relname = 'sessions'`;
    return { updates: row?.updates ?? 0 };
  }
}

/** Commits: one per BEGIN … COMMIT, and one per statement sent outside a transaction. */
function commitsOf(statements: readonly string[]): number {
  let commits = 0;
  let inTransaction = false;
  for (const statement of statements) {
    const verb = statement
      .trim()
      .split(/[\s;]+/, 1)[0]
      ?.toLowerCase();
    if (verb === "begin") inTransaction = true;
    else if (verb === "commit" || verb === "rollback") {
      inTransaction = false;
      commits++;
    } else if (!inTransaction) commits++;
  }
  return commits;
}

describe("the cost of a plain turn on Postgres (docs/turn-cost.md)", () => {
  it(`is at most 3 commits, and turn ${LAST_TURN} of a session reads and sends what turn 2 did`, async () => {
    const turns = new PlainTurns();
    try {
      const first = await turns.measure();
      const updatesBefore = await turns.sessionUpdates();
      const second = await turns.measure();
      await turns.run(LAST_TURN - 3);
      const last = await turns.measure();
      const updatesAfter = await turns.sessionUpdates();

      // The read, the transition (lease claim and turn start), the settlement.
      expect(first.commits).toBeLessThanOrEqual(3);
      expect(second.commits).toBeLessThanOrEqual(3);
      expect(last.commits).toBe(second.commits);
      expect(last.statements).toStrictEqual(second.statements);
      // Each is one statement: no transaction is opened. The transition commits without waiting for the disk;
      // the settlement, the answer's, waits for it.
      expect(second.statements.filter((text) => /^\s*begin\b/i.test(text))).toHaveLength(0);
      expect(second.statements.filter((text) => text.includes("synchronous_commit"))).toHaveLength(1);
      // Rows read, table by table: flat in the session's length. Turn 1 finds no session and creates it; every
      // later turn's read finds the session row (and its turn and open turn, by primary key: none), and its
      // transition reads the row again to claim it, and nothing more. (Each measured turn runs on a new store,
      // which stores the mode's tool catalog again: finding it there, it reads one row that turn 1 did not. And
      // its call's usage adds to the day's roll-ups, which turn 1 made: a row of each.)
      const rows = (cost: TurnCost) => pick(cost.rowsRead, (name) => !name.includes("."));
      expect(rows(last)).toStrictEqual(rows(second));
      const {
        sessions = 0,
        tool_catalogs: catalogs = 0,
        usage_days: days = 0,
        usage_session_days: sessionDays = 0,
      } = first.rowsRead;
      expect(rows(last)).toStrictEqual({
        ...rows(first),
        sessions: sessions + 2,
        tool_catalogs: catalogs + 1,
        usage_days: days + 1,
        usage_session_days: sessionDays + 1,
      });
      // Through the same indexes: the primary keys, and the running turns' index the claim's running-turn
      // cap counts by. (Index entries read also count entries of dead row versions that vacuum has not
      // removed yet, so their number is not compared.)
      const indexesRead = (cost: TurnCost) =>
        Object.keys(pick(cost.rowsRead, (name, n) => name.includes(".") && n > 0)).sort();
      expect(indexesRead(last)).toStrictEqual(indexesRead(second));
      expect(
        indexesRead(last).every(
          (name) => name.endsWith("_pkey") || name === "turns.turns_running_principal_idx",
        ),
      ).toBe(true);
      // Two updates of the session row a turn: the transition (the claim with the start) and the settlement. Both
      // move `updated_at`, which the session list's index holds, so neither is HOT (docs/turn-cost.md).
      const updates = updatesAfter.updates - updatesBefore.updates;
      expect(updates).toBeGreaterThanOrEqual(2 * (LAST_TURN - 1));
    } finally {
      await dropSchema(turns.schema);
    }
  }, 180_000);
});

describe("the cost of client tools on Postgres (docs/turn-cost.md)", () => {
  it("is at most 3 commits for a user turn ending in client tool calls and for its continuation, late in a session as early", async () => {
    const turns = new PlainTurns();
    try {
      // After a first turn, which creates the session and stores the tool catalog.
      await turns.run(1);
      const early = await turns.measureClientTools();
      await turns.run(100);
      const late = await turns.measureClientTools();
      const rows = (cost: TurnCost) => pick(cost.rowsRead, (name) => !name.includes("."));
      for (const step of ["asking", "continuation"] as const) {
        expect(early[step].commits).toBeLessThanOrEqual(3);
        expect(late[step].statements).toStrictEqual(early[step].statements);
        expect(rows(late[step])).toStrictEqual(rows(early[step]));
      }
    } finally {
      await dropSchema(turns.schema);
    }
  }, 60_000);
});

function pick(
  counts: Record<string, number>,
  keep: (name: string, count: number) => boolean,
): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).filter(([name, count]) => keep(name, count)));
}
