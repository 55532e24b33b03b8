import { ok } from "@aptix/contracts";
import { transact } from "../persistence/transact.js";
import type { TurnPersistence } from "../persistence/turn-persistence.js";
import type { Clock } from "../ports/clock.js";
import type { FileStore } from "../ports/file-store.js";
import type { SessionStores } from "../ports/session-stores.js";
import type { TurnEventLog } from "../ports/turn-event-log.js";
import { decideReap } from "./decide-turn.js";
import type { SessionDeletion } from "./session-deletion.js";
import { decisionWrite } from "./turn-decision.js";

/** Turns (or files) a pruning run removes per store call, and calls it makes at most per run. */
const PRUNE_BATCH = 100;
const MAX_PRUNE_BATCHES = 10;

export interface HousekeepingOptions {
  persistence: TurnPersistence;
  /** What the sweeps find their work in. */
  stores: SessionStores;
  events: TurnEventLog;
  files: FileStore;
  clock: Clock;
  eventRetentionMs: number;
  deletion: SessionDeletion;
  /** Sessions idle longer than this are deleted; absent: kept. */
  sessionRetentionMs?: number;
  /** Traces older than this lose their composed requests and raw payloads. */
  traceRetentionMs: number;
}

/**
 * The work the server runs on a timer: the expired-turn reaper, the pruning of old stream events and the
 * retention sweep of expired files.
 */
export class Housekeeping {
  readonly #options: HousekeepingOptions;

  constructor(options: HousekeepingOptions) {
    this.#options = options;
  }

  /**
   * Fails turns left running by stopped instances (TURN_INTERRUPTED) once their lease has been expired for
   * `expiredForMs` by the store's clock, so their sessions show the truth without waiting for the next
   * request; until then the client may still send the round again to have it run again. Returns how many it
   * failed.
   */
  async failExpiredTurns(options: { expiredForMs?: number; limit?: number } = {}): Promise<number> {
    const { expiredForMs = 0, limit = 100 } = options;
    const { persistence, stores, clock } = this.#options;
    let failedCount = 0;
    for (const key of await stores.turns.findExpiredLeases({ expiredForMs, limit })) {
      const openTurnId = (await persistence.getSession(key))?.openTurnId;
      if (!openTurnId) continue;
      // Read, decided and applied as a request is: the turn failed and the lease given back in one write, which
      // applies only while the session is as read (and its lease still expired); a session that moved on is
      // left as it is.
      const reaped = await transact({
        persistence,
        key,
        attempts: 1,
        lostRace: ok(false),
        decide: async () => {
          const state = await persistence.readTurnState(key, openTurnId);
          const now = clock.now();
          const reap = decideReap(state, now);
          if (!reap) return { type: "answer", answer: ok(false) };
          const applied = () => Promise.resolve(ok(true));
          return { type: "apply", change: decisionWrite(state, reap, now), busy: ok(false), applied };
        },
      });
      if (reaped.successful && reaped.result) failedCount++;
    }
    return failedCount;
  }

  /**
   * Deletes the stream events of turns that ended more than `eventRetentionMs` ago (by this service's clock,
   * which stamps turns' `completedAt`): a stream resumed later gets the rounds' results only. Returns how
   * many turns' events it deleted.
   */
  async pruneTurnEvents(): Promise<number> {
    const { events, clock, eventRetentionMs } = this.#options;
    const endedBefore = new Date(clock.now().getTime() - eventRetentionMs);
    return inBatches(async (limit) => removedAll(await events.prune({ endedBefore, limit })));
  }

  /**
   * The session retention: deletes sessions idle for `sessionRetentionMs` (by this service's clock, which stamps
   * their writes), each as `DELETE` does; one whose turn runs is left for a later sweep. Returns how many.
   */
  async sweepIdleSessions(): Promise<number> {
    const { stores, clock, deletion, sessionRetentionMs } = this.#options;
    if (sessionRetentionMs === undefined) return 0;
    const idleBefore = new Date(clock.now().getTime() - sessionRetentionMs);
    return inBatches(async (limit) => {
      const keys = await stores.directory.findIdleSessions({ idleBefore, limit });
      let removed = 0;
      for (const key of keys) if ((await deletion.delete(key)).successful) removed++;
      // Busy sessions stay found: a batch of them alone ends the sweep rather than finding them again.
      return { found: keys.length, removed };
    });
  }

  /**
   * The trace retention: drops the composed requests and raw provider payloads of LLM calls that started more
   * than `traceRetentionMs` ago, keeping their timings, responses and usage. Returns how many calls it pruned.
   */
  async pruneTraces(): Promise<number> {
    const { stores, clock, traceRetentionMs } = this.#options;
    const startedBefore = new Date(clock.now().getTime() - traceRetentionMs);
    return inBatches(async (limit) =>
      removedAll(await stores.transcripts.pruneTraces({ startedBefore, limit })),
    );
  }

  /**
   * Deletes produced files whose `contentExpires` has passed (by the store's clock), which answer FILE_EXPIRED
   * until then and FILE_NOT_FOUND like unknown ids afterwards, and the files of failed or cancelled turns, which
   * answer FILE_NOT_FOUND already. Returns how many it deleted.
   */
  async sweepFiles(): Promise<number> {
    const { files } = this.#options;
    const expired = await inBatches(async (limit) => removedAll(await files.deleteExpired(limit)));
    const ofFailedTurns = files.deleteFilesOfFailedTurns?.bind(files);
    if (ofFailedTurns === undefined) return expired;
    return expired + (await inBatches(async (limit) => removedAll(await ofFailedTurns(limit))));
  }
}

/**
 * Runs `sweep` batch after batch, each of at most PRUNE_BATCH, until one finds less than a full batch or removes
 * nothing, and at most MAX_PRUNE_BATCHES times: what is left waits for the next sweep. Returns how many it removed.
 */
async function inBatches(
  sweep: (limit: number) => Promise<{ found: number; removed: number }>,
): Promise<number> {
  let removed = 0;
  for (let batch = 0; batch < MAX_PRUNE_BATCHES; batch++) {
    const done = await sweep(PRUNE_BATCH);
    removed += done.removed;
    if (done.found < PRUNE_BATCH || done.removed === 0) break;
  }
  return removed;
}

/** A sweep that removes everything it finds. */
const removedAll = (count: number) => ({ found: count, removed: count });
