import type { SessionKey, TranscriptItem } from "@aptix/core";
import type { ManualClock } from "@aptix/core/testing";
import { newCallRecord, newCursor, newLease, newSessionKey, newTurnRecord } from "@aptix/core/testing";
import { and, eq } from "drizzle-orm";
import { type AptixStore, type StoreDatabase, schema } from "../../src/index.js";

export const SIMULATED_KEY: SessionKey = newSessionKey("session-long", "principal-a");
const LEASE_MS = 60_000;

/** The store calls of one turn, in the order core's persistence layer makes them. */
export const TURN_STEPS = [
  "getTurn",
  "claimSession",
  "startTurn",
  "loadTranscript",
  "recordLlmCall#1",
  "recordLlmCall#2",
  "updateTurn",
] as const;
export type TurnStep = (typeof TURN_STEPS)[number];

/**
 * Persists turn number `turn` (1-based) of `SIMULATED_KEY` the way core does: look the turn up, claim the
 * session (creating it on the first turn), start the turn, load the transcript for a replay, record two LLM
 * calls that each add two transcript items, then complete the turn and release the lease. `mark(step)` is
 * called before each step, so a caller can count the statements each one sends.
 */
export async function persistTurn(
  store: AptixStore,
  clock: ManualClock,
  turn: number,
  mark: (step: TurnStep) => void = () => {},
): Promise<void> {
  const key = SIMULATED_KEY;
  const turnId = `turn-${turn}`;
  const sessions = store.sessions;
  const owner = `owner-${turn}`;
  const leaseOf = () => newLease(owner, new Date(clock.now().getTime() + LEASE_MS));

  mark("getTurn");
  expectValue(await sessions.getTurn(key, turnId), undefined, "getTurn");
  mark("claimSession");
  const claimed = await sessions.claimSession({
    key,
    lease: leaseOf(),
    now: clock.now(),
    create: { conversationContextId: "conv", agentContextId: null, mode: "code" },
  });
  if (claimed.outcome !== "claimed") throw new Error(`turn ${turn}: claim answered ${claimed.outcome}`);
  const cursor = claimed.session.cursor;
  mark("startTurn");
  const started = await sessions.startTurn({
    turn: newTurnRecord(key, turnId, { sequence: turn - 1, startCursor: cursor, createdAt: clock.now() }),
    sessionPatch: { openTurnId: turnId, solutionContextText: `turn ${turn}` },
    leaseOwner: owner,
  });
  expectValue(started, "started", "startTurn");
  mark("loadTranscript");
  const transcript = await sessions.loadTranscript(key, cursor.transcriptLength);
  expectValue(transcript.length, cursor.transcriptLength, "loadTranscript length");

  let length = cursor.transcriptLength;
  for (const index of [0, 1]) {
    mark(index === 0 ? "recordLlmCall#1" : "recordLlmCall#2");
    const items = itemsOf(turn, index);
    const recorded = await sessions.recordLlmCall({
      call: newCallRecord(key, turnId, index, { startedAt: clock.now() }),
      progress: {
        items,
        fromPosition: length,
        cursor: newCursor({ responseId: `resp_${turn}_${index}`, transcriptLength: length + items.length }),
      },
      lease: leaseOf(),
    });
    expectValue(recorded, true, "recordLlmCall");
    length += items.length;
  }

  mark("updateTurn");
  const updated = await sessions.updateTurn({
    key,
    turnId,
    expectStatus: "running",
    turnPatch: { status: "completed", llmCallCount: 2, completedAt: clock.now() },
    sessionPatch: { openTurnId: null },
    leaseOwner: owner,
    releaseLease: true,
  });
  expectValue(updated, true, "updateTurn");
  clock.advance(1_000);
}

function itemsOf(turn: number, index: number): TranscriptItem[] {
  return [
    { type: "user_message", content: [{ type: "text", text: `turn ${turn}, call ${index}` }] },
    { type: "assistant_message", text: `answer ${turn}.${index}` },
  ];
}

function expectValue<T>(actual: T, expected: T, what: string): void {
  if (actual !== expected) throw new Error(`${what}: expected ${String(expected)}, got ${String(actual)}`);
}

/**
 * Writes turns `from`..`to` of `SIMULATED_KEY` straight into the tables (a few multi-row inserts), as if
 * `persistTurn` had run for each: every turn completed with two LLM calls and four transcript items, and the
 * session's turn count and cursor moved on. Far faster than 200 rounds of store calls.
 */
export async function seedTurns(db: StoreDatabase, from: number, to: number): Promise<void> {
  const key = SIMULATED_KEY;
  const numbers = Array.from({ length: to - from + 1 }, (_, offset) => from + offset);
  const at = new Date("2025-01-01T00:00:00.000Z");
  await db.insert(schema.turns).values(
    numbers.map((turn) =>
      newTurnRecord(key, `turn-${turn}`, {
        sequence: turn - 1,
        status: "completed",
        llmCallCount: 2,
        createdAt: at,
        completedAt: at,
      }),
    ),
  );
  await db.insert(schema.llmCalls).values(
    numbers.flatMap((turn) =>
      [0, 1].map((index) => {
        const { index: callIndex, ...call } = newCallRecord(key, `turn-${turn}`, index);
        return { ...call, callIndex };
      }),
    ),
  );
  await db.insert(schema.transcriptItems).values(
    numbers.flatMap((turn) =>
      [0, 1].flatMap((index) =>
        itemsOf(turn, index).map((item, offset) => ({
          principal: key.principal,
          sessionId: key.sessionId,
          position: (turn - 1) * 4 + index * 2 + offset,
          item,
        })),
      ),
    ),
  );
  await db
    .update(schema.sessions)
    .set({ turnCount: to, cursor: newCursor({ responseId: `resp_${to}_1`, transcriptLength: to * 4 }) })
    .where(and(eq(schema.sessions.principal, key.principal), eq(schema.sessions.sessionId, key.sessionId)));
}

/** The statements each step of a simulated turn sends (BEGIN and COMMIT included), as DrizzleSessionStore documents. */
export const STATEMENTS_PER_STEP: Record<TurnStep, number> = {
  getTurn: 1,
  claimSession: 1,
  startTurn: 4,
  loadTranscript: 1,
  "recordLlmCall#1": 6,
  "recordLlmCall#2": 6,
  updateTurn: 4,
};

/**
 * Counts the statements each step of a simulated turn sends: pass `onQuery` to `openStore`, then `measure`
 * a turn.
 */
export function statementCounter() {
  let step: TurnStep | undefined;
  let counts = new Map<TurnStep, number>();
  return {
    onQuery: () => {
      if (step !== undefined) counts.set(step, (counts.get(step) ?? 0) + 1);
    },
    async measure(store: AptixStore, clock: ManualClock, turn: number): Promise<Record<TurnStep, number>> {
      counts = new Map();
      await persistTurn(store, clock, turn, (next) => {
        step = next;
      });
      step = undefined;
      return Object.fromEntries(TURN_STEPS.map((name) => [name, counts.get(name) ?? 0])) as Record<
        TurnStep,
        number
      >;
    },
  };
}
