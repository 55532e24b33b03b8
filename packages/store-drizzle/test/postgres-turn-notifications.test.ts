import type { LlmProvider } from "@aptix/core";
import { newLease, newTurnRecord, ScriptedLlmProvider, startTurnFor } from "@aptix/core/testing";
import { drizzle } from "drizzle-orm/postgres-js";
import { afterAll, describe, expect, it } from "vitest";
import { DrizzleTurnEventLog } from "../src/domains/events.js";
import { type AptixStore, openStore } from "../src/index.js";
import { adminSql, closeAdmin, dropSchema, randomSchema, TEST_DATABASE_URL } from "./support/databases.js";
import { plainService } from "./support/plain-service.js";

afterAll(async () => {
  await closeAdmin();
});

/** Deltas written at once; a follower polls far later than the test may take: one that hears of nothing never ends. */
const FOLLOWING = { eventFlushMs: 1, followPollMs: 10 * 60_000 };

/** Two stores (two server instances) over one schema of one Postgres, closed and dropped after `work`. */
async function withTwoInstances(work: (a: AptixStore, b: AptixStore) => Promise<void>): Promise<void> {
  await adminSql();
  const schema = randomSchema();
  const a = await openStore(TEST_DATABASE_URL, { schema });
  const b = await openStore(TEST_DATABASE_URL, { schema });
  try {
    await work(a, b);
  } finally {
    await Promise.all([a.close(), b.close()]);
    await dropSchema(schema);
  }
}

describe("followers on another instance (Postgres LISTEN/NOTIFY)", () => {
  it("hear of a streamed turn's deltas and result as they are committed, without polling", async () => {
    await withTwoInstances(async (a, b) => {
      const scripted = new ScriptedLlmProvider({ id: "scripted" }).enqueue({ text: "Heard from afar." });
      let answer!: () => void;
      const answered = new Promise<void>((resolve) => {
        answer = resolve;
      });
      let calling!: () => void;
      const called = new Promise<void>((resolve) => {
        calling = resolve;
      });
      // The provider of instance A answers only when the test says so: the turn runs while B follows it.
      const held: LlmProvider = {
        id: scripted.id,
        storesResponses: true,
        call: async (request, options) => {
          calling();
          await answered;
          return scripted.call(request, options);
        },
      };
      const running = plainService(a, held, FOLLOWING).execute(
        { sessionId: "s", turnId: "t1", instruction: "Hi", stream: true },
        "principal-a",
        { onEvent: () => {} },
      );
      await called;
      const followed = await plainService(b, scripted, FOLLOWING).followTurn("principal-a", "s", "t1");
      if (!followed.successful) throw new Error(JSON.stringify(followed.errors));
      const events: Array<{ event: string; data: unknown }> = [];
      const following = (async () => {
        for await (const event of followed.result) events.push(event);
      })();
      answer();
      const result = await running;
      await following;
      expect(events.at(-1)).toStrictEqual({ id: "0-result", event: "result", data: result });
      expect(
        events
          .filter((event) => event.event === "output_text.delta")
          .map((event) => (event.data as { delta: string }).delta)
          .join(""),
      ).toBe("Heard from afar.");
    });
  }, 30_000);

  it("hears only the changes of its own schema", async () => {
    await withTwoInstances(async (a, b) => {
      const otherSchema = randomSchema();
      const other = await openStore(TEST_DATABASE_URL, { schema: otherSchema });
      try {
        const heard: string[] = [];
        let first!: () => void;
        const heardOne = new Promise<void>((resolve) => {
          first = resolve;
        });
        const stop = await b.events.listen?.((key, turnId) => {
          heard.push(`${key.principal}/${key.sessionId}/${turnId}`);
          first();
        });
        const deltas = [{ round: 0, seq: 0, delta: "x" }];
        const elsewhere = { principal: "p", sessionId: "elsewhere" };
        const here = { principal: "p", sessionId: "here" };
        const lease = newLease("owner", 60_000);
        await startTurnFor(other.sessions, newTurnRecord(elsewhere, "t0"), lease);
        await startTurnFor(a.sessions, newTurnRecord(here, "t1"), lease);
        await other.events.append({ key: elsewhere, turnId: "t0", leaseOwner: lease.owner, deltas });
        await a.events.append({ key: here, turnId: "t1", leaseOwner: lease.owner, deltas });
        await heardOne;
        await stop?.();
        expect(heard).toStrictEqual(["p/here/t1"]);
      } finally {
        await other.close();
        await dropSchema(otherSchema);
      }
    });
  }, 30_000);

  it("ignores a notification that names no turn, tells of it, and goes on hearing cancels", async () => {
    await adminSql();
    const schema = randomSchema();
    const warnings: Array<[string, Record<string, unknown>]> = [];
    const store = await openStore(TEST_DATABASE_URL, {
      schema,
      onWarning: (message, detail) => warnings.push([message, detail]),
    });
    try {
      const heard: string[] = [];
      let first!: () => void;
      const heardOne = new Promise<void>((resolve) => {
        first = resolve;
      });
      const stop = await store.events.listenCancels?.((key, turnId) => {
        heard.push(`${key.principal}/${key.sessionId}/${turnId}`);
        first();
      });
      const sql = await adminSql();
      for (const payload of ["not json", "[1,2]", JSON.stringify([schema, "p", "", "t"])]) {
        await sql`select pg_notify('aptix_turn_cancelled', ${payload})`;
      }
      await sql`select pg_notify('aptix_turn_cancelled', ${JSON.stringify([schema, "p", "s", "t1"])})`;
      await heardOne;
      await stop?.();
      expect(heard).toStrictEqual(["p/s/t1"]);
      expect(warnings).toStrictEqual(
        ["not json", "[1,2]", JSON.stringify([schema, "p", "", "t"])].map((payload) => [
          "ignored a notification that names no turn",
          { channel: "aptix_turn_cancelled", payload },
        ]),
      );
    } finally {
      await store.close();
      await dropSchema(schema);
    }
  }, 30_000);

  it("listenerHeard: hears its own check on Postgres, and says so when no notification arrives", async () => {
    await withTwoInstances(async (a) => {
      expect(await a.listenerHeard()).toBe(true);
      // The previous check's notification came back through the listening connection.
      for (let check = 0; check < 3; check++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(await a.listenerHeard()).toBe(true);
      }
    });
    // A listener that hears nothing (as behind a pooler that cannot LISTEN): one or two silent checks may be a
    // busy machine; the third in a row says it is deaf, and so does every later one.
    const deaf = new DrizzleTurnEventLog(drizzle(await adminSql()), {
      schema: "aptix",
      listen: async () => async () => {},
    });
    const checks: boolean[] = [];
    for (let check = 0; check < 5; check++) checks.push(await deaf.listenerHeard());
    expect(checks).toEqual([true, true, true, false, false]);
  }, 60_000);
});
