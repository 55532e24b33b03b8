/**
 * The retention sweeps over real HTTP on Postgres (DESIGN §12): with `APTIX_SESSION_RETENTION_DAYS` a session
 * idle longer is deleted as `DELETE` deletes it, and with `APTIX_TRACE_RETENTION_DAYS` an older trace loses its
 * composed request and raw payloads but keeps its timing. The clock the test controls is the rows' own: it ages
 * them in the database, and the service's housekeeping (every 250 ms with a 1 s lease) finds them. On PGlite the
 * database lives inside the service's process; the same sweeps run there with a manual clock in core's
 * retention scenarios.
 */
import { type ScriptedOpenAI, startScriptedOpenAI, step } from "@aptix/testing-llm-servers";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  checkAndResetHarness,
  expectFinal,
  postgresDriver,
  startTestService,
  type TestService,
  uniqueId,
  userTurn,
} from "../../src/e2e/index.js";

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

let harness: ScriptedOpenAI;
let service: TestService;

beforeAll(async () => {
  harness = await startScriptedOpenAI();
  service = await startTestService({
    store: "postgres",
    harness,
    env: { APTIX_LEASE_MS: "1000", APTIX_SESSION_RETENTION_DAYS: "2", APTIX_TRACE_RETENTION_DAYS: "1" },
  });
});

afterAll(async () => {
  await service?.close();
  await harness?.close();
});

afterEach(() => {
  checkAndResetHarness(harness);
});

/** Runs SQL on the service's schema (`S.` before a table's name), with the store's own Postgres driver. */
async function onSchema<T>(query: string): Promise<T> {
  const sql = postgresDriver()(service.database.url, { max: 1, onnotice: () => {}, fetch_types: false });
  try {
    return (await sql.unsafe(query.replaceAll("S.", `"${service.database.schema}".`))) as T;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

describe("retention sweeps", () => {
  it("delete a session idle past APTIX_SESSION_RETENTION_DAYS, and prune traces older than APTIX_TRACE_RETENTION_DAYS", async () => {
    const idle = uniqueId("idle");
    const kept = uniqueId("kept");
    harness.script(step.text("Old answer."), step.text("Recent answer."));
    expectFinal(await service.post(userTurn(idle, "t1", "An old question")));
    expectFinal(await service.post(userTurn(kept, "t1", "A recent question")));

    // Three days idle (past the two kept), and a trace two days old (past the one its payloads are kept).
    await onSchema(
      `update S.sessions set updated_at = now() - interval '3 days' where session_id = '${idle}'`,
    );
    await onSchema(
      `update S.llm_calls set started_at = now() - interval '2 days' where session_id = '${kept}'`,
    );

    await vi.waitFor(
      async () => {
        expect((await service.get(`/v1/sessions/${idle}`)).status).toBe(404);
      },
      { timeout: 15_000, interval: 100 },
    );
    const rows = await onSchema<Array<{ session_id: string }>>(
      `select session_id from S.turns where session_id = '${idle}'
       union all select session_id from S.llm_calls where session_id = '${idle}'
       union all select session_id from S.transcript_items where session_id = '${idle}'`,
    );
    expect(rows).toEqual([]);

    // The recent session stays, and its aged trace keeps its timing without its payloads.
    expect((await service.get(`/v1/sessions/${kept}`)).status).toBe(200);
    await vi.waitFor(
      async () => {
        const calls = await onSchema<Array<{ pruned: boolean; timed: boolean }>>(
          `select request is null and provider_request is null and provider_response is null as pruned,
                  duration_ms is not null as timed
           from S.llm_calls where session_id = '${kept}'`,
        );
        expect(calls).toEqual([{ pruned: true, timed: true }]);
      },
      { timeout: 15_000, interval: 100 },
    );
  });
});
