import type { LlmCallRecord, SessionKey } from "@aptix/core";
import {
  ManualClock,
  newCallRecord,
  newLease,
  newSessionKey,
  newTurnRecord,
  startTurnFor,
} from "@aptix/core/testing";
import { PGlite } from "@electric-sql/pglite";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { type AptixStore, openPgliteStore, openStore } from "../src/index.js";
import { adminSql, closeAdmin, dropSchema, randomSchema, TEST_DATABASE_URL } from "./support/databases.js";

afterAll(async () => {
  await closeAdmin();
});

/** A database for the test, opened by `open` as often as needed (one store at a time), and a query on its tables. */
interface Backend {
  open(): Promise<AptixStore>;
  query(text: string): Promise<Record<string, unknown>[]>;
  drop(): Promise<void>;
}

function postgresBackend(): Backend {
  const schema = randomSchema();
  return {
    open: () => openStore(TEST_DATABASE_URL, { schema }),
    async query(text) {
      const sql = await adminSql();
      await sql.unsafe(`set search_path to "${schema}"`);
      return [...(await sql.unsafe(text))];
    },
    drop: () => dropSchema(schema),
  };
}

function pgliteBackend(): Backend {
  const client = new PGlite();
  return {
    open: () => openPgliteStore(client),
    async query(text) {
      await client.query(`set search_path to aptix`);
      return (await client.query<Record<string, unknown>>(text)).rows;
    },
    drop: () => client.close(),
  };
}

const clock = new ManualClock();

/** A session with a running turn held by `owner`, on `store`. */
async function runningTurn(store: AptixStore, key: SessionKey, owner: string): Promise<void> {
  const turn = newTurnRecord(key, "turn-1", { createdAt: clock.now() });
  await startTurnFor(store.sessions, turn, newLease(owner, 60_000));
}

describe.each([
  { name: "Postgres", backend: postgresBackend },
  { name: "PGlite", backend: pgliteBackend },
])("tool catalogs on $name", ({ backend: makeBackend }) => {
  let backend: Backend;
  let store: AptixStore | undefined;

  beforeEach(() => {
    backend = makeBackend();
  });

  afterEach(async () => {
    await store?.close();
    store = undefined;
    await backend.drop();
  });

  /** A new store instance, the one before closed: it knows none of the catalogs stored. */
  async function open(): Promise<AptixStore> {
    await store?.close();
    store = await backend.open();
    return store;
  }

  /** A new store instance, with a running turn of `key` held by owner-1. */
  async function openWithTurn(key: SessionKey): Promise<AptixStore> {
    const instance = await open();
    await runningTurn(instance, key, "owner-1");
    return instance;
  }

  it("stores each catalog once, keeps calls without it, and lists calls with it", async () => {
    const keys = [newSessionKey("session-1"), newSessionKey("session-2", "principal-b")];
    const calls = keys.flatMap((key) => [0, 1].map((index) => newCallRecord(key, "turn-1", index)));
    for (const key of keys) {
      const instance = await openWithTurn(key);
      for (const call of calls.filter((c) => c.principal === key.principal)) {
        expect(
          await instance.sessions.turns.recordLlmCall({ call, lease: newLease("owner-1", 60_000) }),
        ).toBe(true);
      }
    }

    // Two catalogs in all: the neutral request's and the provider's, the same in every call.
    const call = newCallRecord(newSessionKey(), "turn-1", 0);
    const catalogs = await backend.query(`select "tools" from "tool_catalogs"`);
    expect(catalogs.map((row) => row.tools)).toHaveLength(2);
    expect(catalogs.map((row) => row.tools)).toEqual(
      expect.arrayContaining([call.request?.tools, (call.providerRequest as { tools: unknown }).tools]),
    );
    const rows = await backend.query(
      `select "request" ? 'tools' as "inline", "provider_request" ? 'tools' as "providerInline",
         "request_tools" is not null as "digest" from "llm_calls"`,
    );
    expect(rows).toHaveLength(4);
    expect(
      rows.every((row) => row.inline === false && row.providerInline === false && row.digest === true),
    ).toBe(true);

    const reader = await open();
    for (const key of keys) {
      expect(await reader.sessions.transcripts.listLlmCalls(key, "turn-1")).toStrictEqual(
        calls.filter((call) => call.principal === key.principal),
      );
    }
  });

  it("stores a call without tools whole, and reads a call stored before catalogs as it was", async () => {
    const key = newSessionKey();
    const instance = await openWithTurn(key);
    const bare = newCallRecord(key, "turn-1", 0);
    const withoutTools: LlmCallRecord = {
      ...bare,
      request: { ...(bare.request as NonNullable<LlmCallRecord["request"]>), tools: [] },
      providerRequest: { model: "m" },
    };
    expect(
      await instance.sessions.turns.recordLlmCall({ call: withoutTools, lease: newLease("owner-1", 60_000) }),
    ).toBe(true);
    expect(await backend.query(`select 1 from "tool_catalogs"`)).toHaveLength(0);

    // A row of an earlier version: its catalogs inline, no digests.
    const old = newCallRecord(key, "turn-1", 1);
    await backend.query(
      `insert into "llm_calls" ("principal", "session_id", "turn_id", "call_index", "request", "response",
         "provider_request", "provider_response", "error", "started_at", "duration_ms")
       values ('principal-a', 'session-1', 'turn-1', 1, '${JSON.stringify(old.request)}',
         '${JSON.stringify(old.response)}', '${JSON.stringify(old.providerRequest)}',
         '${JSON.stringify(old.providerResponse)}', null, '${old.startedAt.toISOString()}', ${old.durationMs})`,
    );
    // Nor did it record its provider, or an id of the call: its key in the trace names it.
    const { provider: _notRecorded, ...oldAsRead } = { ...old, callId: "turn-1#1" };
    expect(await instance.sessions.transcripts.listLlmCalls(key, "turn-1")).toStrictEqual([
      withoutTools,
      oldAsRead,
    ]);
  });

  it("writes no catalog for a call whose lease is not held", async () => {
    const key = newSessionKey();
    const instance = await openWithTurn(key);
    const call = newCallRecord(key, "turn-1", 0);
    expect(await instance.sessions.turns.recordLlmCall({ call, lease: newLease("owner-2", 60_000) })).toBe(
      false,
    );
    expect(await backend.query(`select 1 from "tool_catalogs"`)).toHaveLength(0);
    // Refused, the catalogs are still unknown to this instance: the next held write stores them.
    expect(await instance.sessions.turns.recordLlmCall({ call, lease: newLease("owner-1", 60_000) })).toBe(
      true,
    );
    expect(await backend.query(`select 1 from "tool_catalogs"`)).toHaveLength(2);
    expect(await instance.sessions.transcripts.listLlmCalls(key, "turn-1")).toStrictEqual([call]);
  });
});

describe("tool catalogs on Postgres, two instances at once", () => {
  it("stores a new catalog once when both write it at the same time", async () => {
    const backend = postgresBackend();
    const keys = [newSessionKey("session-1"), newSessionKey("session-2", "principal-b")];
    const instances = await Promise.all(keys.map(() => backend.open()));
    try {
      await Promise.all(
        instances.map((instance, i) => runningTurn(instance, keys[i] as SessionKey, "owner-1")),
      );
      const calls = keys.map((key) => newCallRecord(key, "turn-1", 0));
      const written = await Promise.all(
        instances.map((instance, i) =>
          instance.sessions.turns.recordLlmCall({
            call: calls[i] as LlmCallRecord,
            lease: newLease("owner-1", 60_000),
          }),
        ),
      );
      expect(written).toStrictEqual([true, true]);
      expect(await backend.query(`select 1 from "tool_catalogs"`)).toHaveLength(2);
      for (const [i, key] of keys.entries()) {
        expect(await instances[i]?.sessions.transcripts.listLlmCalls(key, "turn-1")).toStrictEqual([
          calls[i],
        ]);
      }
    } finally {
      await Promise.all(instances.map((instance) => instance.close()));
      await backend.drop();
    }
  });
});
