import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ManualClock,
  newCallRecord,
  newCursor,
  newLease,
  newSessionKey,
  newStoredFile,
  newTurnRecord,
  sampleTranscriptItems,
  startTurnFor,
} from "@aptix/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type StoreStep } from "../src/index.js";

// Creating a database runs PGlite's initdb, seconds of CPU, minutes on a busy two-core machine: this file creates
// one in memory and one on disk in a hook; the tests then open them again, seconds of CPU each, which a loaded
// machine stretched past a minute. Every wait here is for PGlite's work, which ends (initdb in a child process,
// opening and migrating in this one), succeeding or failing: none has a time limit.
describe("openStore on PGlite", { timeout: 0 }, () => {
  let directory: string;
  /** A database on disk, created by the hook. */
  let path: string;
  /** The steps of opening it the first time. */
  let created: StoreStep[];

  const opened = async (options: { clock?: ManualClock } = {}) => {
    const steps: StoreStep[] = [];
    const store = await openStore(path, { ...options, onStep: (step) => steps.push(step) });
    return { store, steps };
  };

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), "aptix-store-"));
    path = join(directory, "db", "nested"); // created by openStore
    const [first] = await Promise.all([opened(), openStore("memory://").then((store) => store.close())]);
    created = first.steps;
    await first.store.close();
  }, 0);

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it("opens memory:// as an empty in-memory database, migrated into the default schema", async () => {
    const store = await openStore("memory://");
    try {
      expect(await store.readiness()).toStrictEqual({ ready: true });
      expect(await store.sessions.directory.getSession(newSessionKey())).toBeUndefined();
      await store.files.put(newStoredFile("principal-a", "file_1"), Uint8Array.from([1, 2, 3, 4]));
      expect(Array.from((await store.files.get("principal-a", "file_1"))?.content ?? [])).toEqual([
        1, 2, 3, 4,
      ]);
    } finally {
      await store.close();
    }
  });

  it("opens each memory:// as a database of its own, though the process initializes one only once", async () => {
    const [first, second] = [await openStore("memory://"), await openStore("memory://")];
    try {
      await first.files.put(newStoredFile("principal-a", "file_1"), Uint8Array.from([1]));
      expect(await second.files.get("principal-a", "file_1")).toBeUndefined();
      expect(await first.files.get("principal-a", "file_1")).toBeDefined();
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it("keeps sessions, transcripts and files across a close and a reopen of the directory", async () => {
    const clock = new ManualClock();
    const key = newSessionKey("session-disk");
    const items = sampleTranscriptItems();
    const call = newCallRecord(key, "turn-1", 0);

    const { store: first } = await opened({ clock });
    expect(await first.readiness()).toStrictEqual({ ready: true });
    const turn = newTurnRecord(key, "turn-1", { createdAt: clock.now() });
    await startTurnFor(first.sessions, turn, newLease("owner-1", 60_000));
    const cursor = newCursor({ responseId: "resp_0", transcriptLength: items.length });
    expect(
      await first.sessions.turns.recordLlmCall({
        call,
        progress: { items, fromPosition: 0, cursor },
        lease: newLease("owner-1", 60_000),
      }),
    ).toBe(true);
    const file = newStoredFile(key.principal, "file_1");
    await first.files.put(file, Uint8Array.from([0, 1, 2, 255]));
    const session = await first.sessions.directory.getSession(key);
    await first.close();
    const closed = await first.readiness();
    expect(closed.ready).toBe(false);
    expect(closed.reason).toBeTruthy();

    const { store: second } = await opened({ clock });
    try {
      expect(await second.readiness()).toStrictEqual({ ready: true });
      expect(await second.sessions.directory.getSession(key)).toStrictEqual(session);
      expect(session?.cursor).toStrictEqual(cursor);
      expect(await second.sessions.turns.getTurn(key, "turn-1")).toStrictEqual(turn);
      expect(await second.sessions.transcripts.loadTranscript(key, items.length)).toStrictEqual(items);
      expect(await second.sessions.transcripts.listLlmCalls(key, "turn-1")).toStrictEqual([call]);
      const stored = await second.files.get(key.principal, "file_1");
      expect(stored?.file).toStrictEqual(file);
      expect(Array.from(stored?.content ?? [])).toEqual([0, 1, 2, 255]);
    } finally {
      await second.close();
    }
  });

  it("tells each step of opening as it starts and, with its duration, once done: creating only a new database", async () => {
    const started = (name: StoreStep["name"]) => ({ name });
    const done = (name: StoreStep["name"]) => ({ name, durationMs: expect.any(Number) });
    expect(created).toEqual([
      started("create"),
      done("create"),
      started("open"),
      done("open"),
      started("migrate"),
      done("migrate"),
    ]);
    const again = await opened();
    await again.store.close();
    expect(again.steps).toEqual([started("open"), done("open"), started("migrate"), done("migrate")]);
  });
});
