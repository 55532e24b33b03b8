import type { BeginTurnResult, ConversationCursor, SessionRecord } from "@aptix/core";
import { ManualClock, newCursor, newLease, newSessionKey, newTurnRecord } from "@aptix/core/testing";
import { PGlite } from "@electric-sql/pglite";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { type AptixStore, openPgliteStore, openStore } from "../src/index.js";
import { closeAdmin, dropSchema, randomSchema, TEST_DATABASE_URL } from "./support/databases.js";

afterAll(async () => {
  await closeAdmin();
});

/** Statements as sent, in groups: a group is what went out before the store awaited an answer. */
class SentGroups {
  readonly groups: string[][] = [];
  #open = false;

  readonly onQuery = (sql: string): void => {
    if (!this.#open) {
      this.#open = true;
      this.groups.push([]);
      // Statements sent without awaiting the one before are reported in the same run of microtasks.
      queueMicrotask(() => {
        this.#open = false;
      });
    }
    this.groups.at(-1)?.push(sql);
  };
}

/** Two server instances over one database (`open` makes one; `sent` sees what the first sends). */
interface Backend {
  open(sent?: SentGroups): Promise<AptixStore>;
  drop(): Promise<void>;
  /** Whether `sent` sees round trips (Postgres), not calls into this process (PGlite). */
  roundTrips: boolean;
}

function postgresBackend(): Backend {
  const schema = randomSchema();
  return {
    open: (sent) => openStore(TEST_DATABASE_URL, { schema, ...(sent ? { onQuery: sent.onQuery } : {}) }),
    drop: () => dropSchema(schema),
    roundTrips: true,
  };
}

function pgliteBackend(): Backend {
  const client = new PGlite();
  return {
    open: (sent) => openPgliteStore(client, sent ? { onQuery: sent.onQuery } : {}),
    drop: () => client.close(),
    roundTrips: false,
  };
}

const key = newSessionKey();
const clock = new ManualClock();

/** Runs a turn on `store` as core does (begin, then settle): what `beginTurn` answered and what it planned from. */
async function runTurn(
  store: AptixStore,
  turnId: string,
  cursor: ConversationCursor,
): Promise<{ begun: BeginTurnResult; plannedFrom: SessionRecord[]; stored: SessionRecord | undefined }> {
  clock.advance(1_000);
  const owner = `owner-${turnId}`;
  const plannedFrom: SessionRecord[] = [];
  const begun = await store.sessions.beginTurn({
    key,
    lease: newLease(owner, 60_000),
    now: clock.now(),
    create: { conversationContextId: "conv", agentContextId: null, mode: "code" },
    turnId,
    plan: (session) => {
      plannedFrom.push(session);
      const turn = newTurnRecord(key, turnId, {
        sequence: session.turnCount + 1,
        startCursor: session.cursor,
        createdAt: clock.now(),
      });
      return { turn, sessionPatch: { openTurnId: turnId } };
    },
  });
  const stored = await store.sessions.getSession(key);
  if (begun.outcome === "started") {
    const settled = await store.sessions.updateTurn({
      key,
      turnId,
      expectStatus: "running",
      turnPatch: { status: "completed" },
      sessionPatch: { openTurnId: null, cursor },
      leaseOwner: owner,
      releaseLease: true,
    });
    expect(settled).toBe(true);
  }
  return { begun, plannedFrom, stored };
}

describe.each([
  { name: "Postgres", backend: postgresBackend },
  { name: "PGlite", backend: pgliteBackend },
])("beginTurn on $name, from the session as this instance last wrote it", ({ backend: makeBackend }) => {
  let backend: Backend;
  const opened: AptixStore[] = [];

  beforeEach(() => {
    backend = makeBackend();
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
    await backend.drop();
  });

  async function open(sent?: SentGroups): Promise<AptixStore> {
    const store = await backend.open(sent);
    opened.push(store);
    return store;
  }

  it("plans the next turn before its claim and sends the start with it, in one statement", async () => {
    const sent = new SentGroups();
    const store = await open(sent);
    const first = await runTurn(store, "turn-1", newCursor({ responseId: "resp_1", transcriptLength: 2 }));
    expect(first.begun.outcome).toBe("started");
    const settled = await store.sessions.getSession(key);

    sent.groups.splice(0);
    const second = await runTurn(store, "turn-2", newCursor({ responseId: "resp_2", transcriptLength: 4 }));
    // Planned once, from the session as the first turn's settlement left it.
    expect(second.plannedFrom).toStrictEqual([settled]);
    expect(second.begun).toStrictEqual({
      outcome: "started",
      session: second.stored,
      turn: expect.objectContaining({ turnId: "turn-2", sequence: 2, startCursor: settled?.cursor }),
    });
    expect(second.stored).toMatchObject({ turnCount: 2, openTurnId: "turn-2" });
    expect(await store.sessions.getTurn(key, "turn-2")).toMatchObject({ sequence: 2, status: "completed" });
    if (backend.roundTrips) {
      // One statement, alone in its round trip, with no BEGIN nor COMMIT, committing asynchronously; then the
      // getSession and the settlement.
      const [begin] = sent.groups;
      expect(begin).toHaveLength(1);
      expect(begin?.[0]).toMatch(/^with existing as /);
      expect(begin?.[0]).toContain("set_config('synchronous_commit', 'off', true)");
    }
  });

  it("plans again from the session as claimed when another instance wrote it since", async () => {
    const instance = await open();
    const other = await open();
    await runTurn(instance, "turn-1", newCursor({ responseId: "resp_1", transcriptLength: 2 }));
    const known = await instance.sessions.getSession(key);
    const cursor2 = newCursor({ responseId: "resp_2", transcriptLength: 4 });
    expect((await runTurn(other, "turn-2", cursor2)).begun.outcome).toBe("started");
    const current = await instance.sessions.getSession(key);

    const third = await runTurn(instance, "turn-3", newCursor({ responseId: "resp_3", transcriptLength: 6 }));
    // The start planned from what this instance knew (turn 1's session) did not apply: it would have been
    // turn 2 again, from turn 1's cursor.
    expect(third.plannedFrom).toStrictEqual([known, current]);
    expect(third.begun).toStrictEqual({
      outcome: "started",
      session: third.stored,
      turn: expect.objectContaining({ sequence: 3, startCursor: cursor2 }),
    });
    expect(
      (await instance.sessions.listTurns(key)).map((turn) => [turn.turnId, turn.sequence]),
    ).toStrictEqual([
      ["turn-1", 1],
      ["turn-2", 2],
      ["turn-3", 3],
    ]);
    expect(third.stored).toMatchObject({ turnCount: 3, openTurnId: "turn-3" });
    // Known again: the next turn is planned once.
    const fourth = await runTurn(instance, "turn-4", newCursor());
    expect(fourth.plannedFrom).toHaveLength(1);
    expect(fourth.begun).toMatchObject({ outcome: "started", turn: { sequence: 4 } });
  });

  it("claims nothing and writes nothing when the turn exists or the session is busy, whatever it planned", async () => {
    const instance = await open();
    await runTurn(instance, "turn-1", newCursor({ responseId: "resp_1" }));
    const before = await instance.sessions.getSession(key);

    const again = await runTurn(instance, "turn-1", newCursor({ responseId: "resp_x" }));
    expect(again.begun).toMatchObject({ outcome: "turn_exists", turn: { turnId: "turn-1", sequence: 1 } });
    expect(again.stored).toStrictEqual(before);

    expect(
      (await instance.sessions.claimSession({ key, lease: newLease("holder", 60_000), now: clock.now() }))
        .outcome,
    ).toBe("claimed");
    const busy = await runTurn(instance, "turn-2", newCursor());
    expect(busy.begun).toStrictEqual({ outcome: "busy" });
    expect(busy.stored).toStrictEqual(before);
    expect(await instance.sessions.getTurn(key, "turn-2")).toBeUndefined();
  });
});
