/**
 * Bounded usage reads: a year of a principal's usage, a million calls, is read from the daily roll-ups the insert
 * trigger keeps, never from the per-call table; and the secrets every instance on one database shares.
 */
import type { SumUsageInput } from "@aptix/core";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DrizzleUsageStore } from "../src/domains/usage-store.js";
import { openStore } from "../src/index.js";
import { adminSql, closeAdmin, dropSchema, randomSchema, TEST_DATABASE_URL } from "./support/databases.js";

const schema = randomSchema();
const CALLS = 1_000_000;
/** Each session's calls, all of one day and model: 5,000 sessions over the year. */
const CALLS_PER_SESSION = 200;
const YEAR = { from: new Date("2026-01-01T00:00:00.000Z"), to: new Date("2027-01-02T00:00:00.000Z") };
let client: postgres.Sql;

beforeAll(async () => {
  const store = await openStore(TEST_DATABASE_URL, { schema });
  await store.close();
  const sql = await adminSql();
  // One statement, as the store inserts calls: the trigger adds them to the roll-ups as they go in. Two models,
  // a session a day, a call every few seconds; another principal's calls beside them.
  await sql.unsafe(`
    insert into "${schema}".llm_usage (call_id, principal, session_id, turn_id, call_index, provider, model,
      input_tokens, cached_input_tokens, output_tokens, reasoning_tokens, started_at)
    select 'c' || g, case when g % 10 = 0 then 'principal-b' else 'principal-a' end,
      's' || lpad((g / ${CALLS_PER_SESSION})::text, 5, '0'), 't1', 0, 'openai',
      case when (g / ${CALLS_PER_SESSION}) % 2 = 0 then 'gpt-5' else 'gpt-5-mini' end, 100, 10, 20, 0,
      timestamptz '2026-01-01' + ((g / ${CALLS_PER_SESSION}) % 366) * interval '1 day' + (g % 20000) * interval '4 seconds'
    from generate_series(0, ${CALLS - 1}) g`);
  await sql.unsafe(
    `analyze "${schema}".llm_usage; analyze "${schema}".usage_days; analyze "${schema}".usage_session_days`,
  );
  client = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {}, connection: { search_path: schema } });
}, 300_000);

afterAll(async () => {
  await client?.end({ timeout: 5 });
  await dropSchema(schema);
  await closeAdmin();
});

/** What a read answers, and the plans of the statements it sent, as Postgres explains them. */
async function explained(input: SumUsageInput) {
  const statements: { sql: string; params: unknown[] }[] = [];
  const db = drizzle(client, { logger: { logQuery: (sql, params) => statements.push({ sql, params }) } });
  const sums = await new DrizzleUsageStore(db).sumUsage(input);
  const plans: string[] = [];
  for (const statement of statements) {
    const rows = await client.unsafe(
      `explain ${statement.sql}`,
      statement.params as postgres.ParameterOrJSON<never>[],
    );
    plans.push(rows.map((row) => String(row["QUERY PLAN"])).join("\n"));
  }
  return { sums, plans };
}

const calls = (sums: readonly { llmCalls: number }[]) => sums.reduce((total, sum) => total + sum.llmCalls, 0);

describe("usage reads over a million calls on Postgres", () => {
  it("reads a year by day and by model from usage_days, never llm_usage, at most a row per day and model", async () => {
    const [{ rows }] = await client<[{ rows: number }]>`select count(*)::int as rows from usage_days`;
    // Two principals' 366 days of two models, whatever the number of calls.
    expect(rows).toBeLessThanOrEqual(2 * 366 * 2);
    for (const groupBy of ["day", "model"] as const) {
      const { sums, plans } = await explained({ principal: "principal-a", ...YEAR, groupBy });
      expect(calls(sums)).toBe(CALLS * 0.9);
      expect(plans).toHaveLength(1);
      expect(plans[0]).toMatch(/usage_days/);
      expect(plans[0]).not.toMatch(/llm_usage/);
    }
  });

  it("reads a page of sessions from usage_session_days by its page index, never llm_usage", async () => {
    const { sums, plans } = await explained({
      principal: "principal-a",
      ...YEAR,
      groupBy: "session",
      page: { after: "s01000", limit: 3 },
    });
    expect(sums.map((sum) => [sum.key, sum.llmCalls])).toEqual([
      ["s01001", CALLS_PER_SESSION * 0.9],
      ["s01002", CALLS_PER_SESSION * 0.9],
      ["s01003", CALLS_PER_SESSION * 0.9],
    ]);
    expect(plans).toHaveLength(2);
    const [page, pageSums] = plans as [string, string];
    expect(page).toMatch(/Index (Only )?Scan using usage_session_days_page_idx/);
    expect(pageSums).toMatch(/usage_session_days/);
    for (const plan of plans) {
      expect(plan).not.toMatch(/llm_usage/);
      expect(plan).not.toMatch(/Seq Scan/);
    }
  });
});

describe("deployment secrets on Postgres", () => {
  it("makes a secret once and shares it with every store opened on the database, another name another secret", async () => {
    const shared = randomSchema();
    const [one, two] = await Promise.all([
      openStore(TEST_DATABASE_URL, { schema: shared }),
      openStore(TEST_DATABASE_URL, { schema: shared }),
    ]);
    try {
      const [first, second] = await Promise.all([
        one.deploymentSecret("prompt-cache-key"),
        two.deploymentSecret("prompt-cache-key"),
      ]);
      expect(first).toHaveLength(32);
      expect(Buffer.from(second).equals(Buffer.from(first))).toBe(true);
      expect(Buffer.from(await one.deploymentSecret("prompt-cache-key")).equals(Buffer.from(first))).toBe(
        true,
      );
      const other = await two.deploymentSecret("another");
      expect(Buffer.from(other).equals(Buffer.from(first))).toBe(false);
    } finally {
      await Promise.all([one.close(), two.close()]);
      await dropSchema(shared);
    }
  });
});
