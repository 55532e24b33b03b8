/**
 * Delete means gone (docs/security.md), for files: a file knows the turn that produced it; the sweep deletes the files
 * of failed or cancelled turns (not an interrupted one's, whose round may run again), and a deleted session takes
 * its files with it, whether its turns listed them or not. On PGlite and on Postgres.
 */
import type { SessionKey, TurnStatus } from "@aptix/core";

type ErrorCode = "PROVIDER_ERROR" | "TURN_CANCELLED" | "TURN_INTERRUPTED";

import {
  newLease,
  newStoredFile,
  newTurnRecord,
  startTurnFor,
  writeTurnWhileLeaseHeld,
} from "@aptix/core/testing";
import { afterAll, describe, expect, it } from "vitest";
import { type AptixStore, openStore } from "../src/index.js";
import { adminSql, closeAdmin, dropSchema, randomSchema, TEST_DATABASE_URL } from "./support/databases.js";

afterAll(async () => {
  await closeAdmin();
});

const STORES: Array<[string, () => Promise<{ store: AptixStore; drop(): Promise<void> }>]> = [
  ["PGlite", async () => ({ store: await openStore("memory://"), drop: async () => {} })],
  [
    "Postgres",
    async () => {
      await adminSql();
      const schema = randomSchema();
      return { store: await openStore(TEST_DATABASE_URL, { schema }), drop: () => dropSchema(schema) };
    },
  ],
];

describe.each(STORES)("files of turns on %s", (_, open) => {
  /** A turn of `key` ended as `status` (with `code` as its error), with a file it produced. */
  async function turnWithFile(
    store: AptixStore,
    key: SessionKey,
    turnId: string,
    status: TurnStatus,
    code?: ErrorCode,
  ) {
    const owner = `owner-${turnId}`;
    const sequence = ((await store.sessions.directory.getSession(key))?.turnCount ?? 0) + 1;
    await startTurnFor(store.sessions, newTurnRecord(key, turnId, { sequence }), newLease(owner, 60_000));
    const fileId = `file_${key.sessionId}_${turnId}`;
    await store.files.put(
      newStoredFile(key.principal, fileId, { producedBy: { sessionId: key.sessionId, turnId } }),
      new Uint8Array([1, 2, 3, 4]),
    );
    expect(
      await writeTurnWhileLeaseHeld(store.sessions, new Date(), {
        key,
        turnId,
        turnPatch: {
          status,
          completedAt: new Date(),
          error: code === undefined ? null : { code, message: "" },
        },
        leaseOwner: owner,
        releaseLease: true,
      }),
    ).toBe(true);
    return fileId;
  }

  it("keeps the producing turn, sweeps the files of failed and cancelled turns, and deletes a session's files", async () => {
    const { store, drop } = await open();
    try {
      const key = { principal: "alice", sessionId: "s" };
      const done = await turnWithFile(store, key, "done", "completed");
      const failed = await turnWithFile(store, key, "failed", "failed", "PROVIDER_ERROR");
      const cancelled = await turnWithFile(store, key, "cancelled", "cancelled", "TURN_CANCELLED");
      const interrupted = await turnWithFile(store, key, "interrupted", "failed", "TURN_INTERRUPTED");
      expect((await store.files.get("alice", failed))?.file.producedBy).toEqual({
        sessionId: "s",
        turnId: "failed",
      });

      expect(await store.files.deleteFilesOfFailedTurns?.(1)).toBe(1);
      expect(await store.files.deleteFilesOfFailedTurns?.(10)).toBe(1);
      expect(await store.files.deleteFilesOfFailedTurns?.(10)).toBe(0);
      const left = async (ids: string[]) =>
        (
          await Promise.all(ids.map(async (id) => ((await store.files.get("alice", id)) ? id : undefined)))
        ).filter((id) => id !== undefined);
      expect(await left([done, failed, cancelled, interrupted])).toEqual([done, interrupted]);

      // Deleted with its session, though no turn lists them (fileIds names none).
      const session = await store.sessions.directory.getSession(key);
      expect(
        await store.sessions.directory.deleteSession({
          key,
          expectVersion: session?.version as number,
          fileIds: [],
        }),
      ).toBe("deleted");
      expect(await left([done, interrupted])).toEqual([]);
    } finally {
      await store.close();
      await drop();
    }
  });
});
