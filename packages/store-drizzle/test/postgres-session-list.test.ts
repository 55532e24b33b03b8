/**
 * Bounded reads (docs/security.md): a page of `GET /v1/sessions` reads a principal's newest sessions through an index,
 * not every session of the principal sorted, and never a turn but each listed session's latest one.
 */
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionPage } from "../src/domains/session-directory.js";
import { openStore } from "../src/index.js";
import { adminSql, closeAdmin, dropSchema, randomSchema, TEST_DATABASE_URL } from "./support/databases.js";

const schema = randomSchema();
let client: postgres.Sql;

beforeAll(async () => {
  const store = await openStore(TEST_DATABASE_URL, { schema });
  await store.close();
  const sql = await adminSql();
  // 40 principals with 100 sessions each, each session with 5 turns: enough rows for the planner to choose.
  await sql.unsafe(`
    insert into "${schema}".sessions (principal, session_id, conversation_context_id, mode, cursor, turn_count,
      version, workspace_id, created_at, updated_at)
    select 'p' || p, 's' || s, 'default', 'general', '{}'::jsonb, 5, 1, case when s % 4 = 0 then 'ws' end,
      now() - (s || ' minutes')::interval, now() - (s || ' minutes')::interval
    from generate_series(1, 40) p, generate_series(1, 100) s`);
  await sql.unsafe(`
    insert into "${schema}".turns (principal, session_id, turn_id, sequence, status, mode, stream, rounds,
      start_cursor, tool_executions, files, usage, llm_call_count, created_at, updated_at)
    select principal, session_id, 't' || n, n, 'completed', 'general', false, '[]'::jsonb, '{}'::jsonb,
      '[]'::jsonb, '[]'::jsonb, '{}'::jsonb, 0, created_at, updated_at
    from "${schema}".sessions, generate_series(1, 5) n`);
  await sql.unsafe(`analyze "${schema}".sessions; analyze "${schema}".turns`);
  client = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {}, connection: { search_path: schema } });
});

afterAll(async () => {
  await client?.end({ timeout: 5 });
  await dropSchema(schema);
  await closeAdmin();
});

/** The plan Postgres chooses for a page, as text. */
async function planOf(input: Parameters<typeof sessionPage>[1]): Promise<string> {
  const query = sessionPage(drizzle(client), input).toSQL();
  const rows = await client.unsafe(`explain ${query.sql}`, query.params as postgres.ParameterOrJSON<never>[]);
  return rows.map((row) => String(row["QUERY PLAN"])).join("\n");
}

describe("a page of sessions on Postgres", () => {
  it("reads the principal's newest sessions through sessions_principal_updated_idx, with no sort", async () => {
    const plan = await planOf({ principal: "p7", limit: 21 });
    expect(plan).toMatch(/Index Scan Backward using sessions_principal_updated_idx on sessions/);
    expect(plan).not.toMatch(/Seq Scan on sessions|Sort/);
    // The latest turn's status: one row of the session's turns by sequence, not every turn.
    expect(plan).toMatch(/Index Scan using turns_session_sequence_idx on turns/);
  });

  it("pages after a cursor, and filters by workspace, through the same index (never every session scanned)", async () => {
    const after = { updatedAt: new Date(Date.now() - 30 * 60_000), sessionId: "s30" };
    for (const plan of [
      await planOf({ principal: "p7", limit: 21, after }),
      await planOf({ principal: "p7", limit: 21, workspaceId: "ws" }),
    ]) {
      // Postgres may read the matching rows by a bitmap of the same index and sort those few.
      expect(plan).toMatch(/Index Scan( Backward)? (using|on) sessions_principal_updated_idx/);
      expect(plan).not.toMatch(/Seq Scan on sessions/);
    }
  });

  it("answers the page the index reads: newest first, the status of each session's latest turn", async () => {
    const rows = await sessionPage(drizzle(client), { principal: "p7", limit: 3, workspaceId: "ws" });
    expect(rows.map((row) => [row.sessionId, row.lastTurnStatus, row.workspaceId])).toEqual([
      ["s4", "completed", "ws"],
      ["s8", "completed", "ws"],
      ["s12", "completed", "ws"],
    ]);
  });
});
