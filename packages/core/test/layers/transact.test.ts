import { fail, ok } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import { inMemorySessionStores } from "../../src/in-memory/in-memory-session-stores.js";
import { type Decision, transact } from "../../src/persistence/transact.js";
import { TurnPersistence } from "../../src/persistence/turn-persistence.js";
import { ManualClock } from "../../src/testing/manual-clock.js";

const key = { principal: "alice", sessionId: "s1" };
const create = { conversationContextId: "default", agentContextId: null, mode: "general" };
const BUSY = fail("SESSION_BUSY", "busy");
const LOST = fail("SESSION_BUSY", "lost every race");

/** A session created (its lease given back), and a persistence over its store. */
async function setup() {
  const clock = new ManualClock();
  const stores = inMemorySessionStores(clock);
  let ids = 0;
  const persistence = new TurnPersistence({
    stores,
    clock,
    ids: { newId: (prefix) => `${prefix}_${++ids}` },
    leaseMs: 60_000,
  });
  const created = await persistence.apply({ guard: "create", key, now: clock.now(), create }, false);
  if (created.outcome !== "applied") throw new Error(`not created: ${created.outcome}`);
  await created.lease.release();
  return { clock, persistence, stores };
}

describe("transact (layer 5): read, decide, write guarded, again on a lost race", () => {
  it("reads and decides again when the session changed between its read and its write, then applies", async () => {
    const { clock, persistence } = await setup();
    let reads = 0;
    const claimed = await transact({
      persistence,
      key,
      attempts: 3,
      lostRace: LOST,
      decide: async (): Promise<Decision<number>> => {
        reads++;
        const session = await persistence.getSession(key);
        if (!session) throw new Error("no session");
        // The first attempt loses its race: another write moves the version after the read.
        if (reads === 1) await racingWrite(persistence, clock);
        return {
          type: "apply",
          change: { guard: "version", now: clock.now(), expectVersion: session.version, releaseLease: true },
          busy: BUSY,
          applied: async ({ session: after }) => ok(after.version),
        };
      },
    });
    expect(reads).toBe(2);
    expect(claimed).toEqual(ok((await persistence.getSession(key))?.version));
  });

  it("answers lostRace after `attempts` reads that each lost, having written nothing of its own", async () => {
    const { clock, persistence } = await setup();
    let reads = 0;
    const answered = await transact({
      persistence,
      key,
      attempts: 3,
      lostRace: LOST,
      decide: async (): Promise<Decision<never>> => {
        reads++;
        return {
          type: "apply",
          change: { guard: "version", now: clock.now(), expectVersion: -1 },
          busy: BUSY,
          applied: never,
        };
      },
    });
    expect(answered).toBe(LOST);
    expect(reads).toBe(3);
  });

  it("answers the decision's busy while another owner holds the lease, and an answer without writing", async () => {
    const { clock, persistence } = await setup();
    const held = await racingWrite(persistence, clock, false);
    const decideApply = async (): Promise<Decision<never>> => {
      const session = await persistence.getSession(key);
      return {
        type: "apply",
        change: { guard: "version", now: clock.now(), expectVersion: session?.version ?? 0 },
        busy: BUSY,
        applied: never,
      };
    };
    expect(await transact({ persistence, key, attempts: 3, lostRace: LOST, decide: decideApply })).toBe(BUSY);
    const version = held.version;
    const answer = ok("nothing to do");
    const decideAnswer = async (): Promise<Decision<string>> => ({ type: "answer", answer });
    expect(await transact({ persistence, key, attempts: 3, lostRace: LOST, decide: decideAnswer })).toBe(
      answer,
    );
    expect((await persistence.getSession(key))?.version).toBe(version);
  });

  it("deletes the session guarded by the version read, then tells `deleted`", async () => {
    const { persistence, stores } = await setup();
    const deleted = await transact({
      persistence,
      key,
      attempts: 3,
      lostRace: LOST,
      decide: async (): Promise<Decision<boolean>> => {
        const session = await persistence.getSession(key);
        if (!session) return { type: "answer", answer: ok(false) };
        const remove = () =>
          stores.directory.deleteSession({ key, expectVersion: session.version, fileIds: [] });
        return { type: "delete", remove, busy: BUSY, deleted: async () => ok(true) };
      },
    });
    expect(deleted).toEqual(ok(true));
    expect(await persistence.getSession(key)).toBeUndefined();
  });
});

/** Another request's write to the session (a claim), which moves its version; its lease kept unless `release`. */
async function racingWrite(persistence: TurnPersistence, clock: ManualClock, release = true) {
  const session = await persistence.getSession(key);
  const applied = await persistence.apply(
    { guard: "version", key, now: clock.now(), expectVersion: session?.version ?? 0 },
    false,
  );
  if (applied.outcome !== "applied") throw new Error(`the racing write was not applied: ${applied.outcome}`);
  if (release) await applied.lease.release();
  return applied.session;
}

function never(): never {
  throw new Error("applied, though it must not be");
}
