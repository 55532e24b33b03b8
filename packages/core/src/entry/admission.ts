import {
  type AgentExecuteRequest,
  type AgentExecuteResponse,
  type InvokeFailure,
  type InvokeResult,
  type InvokeWarning,
  isToolContinuationRequest,
  ok,
} from "@aptix/contracts";
import type { AgentCatalog } from "../catalog/agent-catalog.js";
import type { ConversationContext } from "../catalog/conversation-context.js";
import type { RoundOpening } from "../composition/round-opening.js";
import { type Decision, transact } from "../persistence/transact.js";
import type { SessionLease, TurnPersistence } from "../persistence/turn-persistence.js";
import type { Clock } from "../ports/clock.js";
import type { ContentHashService } from "../ports/content-hash-service.js";
import type { TranscriptStore } from "../ports/transcript-store.js";
import type { SessionKey, SessionRecord } from "../records/session-record.js";
import type { TurnRecord } from "../records/turn-record.js";
import type { Budgets } from "../usage/budgets.js";
import { decideDequeue, decideTurnRequest } from "./decide-turn.js";
import { sessionBusy, stillAnswering } from "./entry-failures.js";
import { requestHash } from "./request-hash.js";
import { decisionWrite, runsTurn, type TurnDecision } from "./turn-decision.js";

/**
 * A round let into its turn and ready to run: the data the round runner needs. `round` is the index of the
 * request in its turn (0 for the user turn, then one per continuation).
 */
export interface RunningRound {
  round: number;
  lease: SessionLease;
  session: SessionRecord;
  turn: TurnRecord;
  context: ConversationContext;
  opening: RoundOpening;
  warnings: InvokeWarning[];
  /** The round runs again after its instance stopped: its streamed events follow the earlier attempt's. */
  rerun?: boolean;
  /** A new user turn's first round: its budget was judged as it was admitted, so its first call is not judged again. */
  admittedUnderBudget?: boolean;
}

/**
 * What admission decided for a request let into its turn; a refusal is the InvokeFailure itself.
 * - `stored_answer`: the round was answered before; its answer, again.
 * - `run_round`: the round runs now, under the lease it holds.
 * - `settle_failure`: the round fails before it runs (its turn fails with it), under the lease it holds.
 * - `follow`: the turn is queued (or under way, for a background request): its answer comes as it runs,
 *   wherever that is, and is read from the store (`TurnFollower`).
 */
export type Admission =
  | {
      type: "stored_answer";
      round: number;
      result: InvokeResult<AgentExecuteResponse>;
      /** Whether its turn streams its answers (a continuation's answer streams when its user turn did). */
      stream: boolean;
    }
  | ({ type: "run_round" } & RunningRound)
  | { type: "settle_failure"; round: number; lease: SessionLease; turn: TurnRecord; failure: InvokeFailure }
  | { type: "follow"; round: number; turn: TurnRecord };

export interface TurnAdmissionOptions {
  catalog: AgentCatalog;
  persistence: TurnPersistence;
  /** Where a rerun round reads the calls its earlier attempt made. */
  transcripts: Pick<TranscriptStore, "listLlmCalls">;
  clock: Clock;
  hashing: ContentHashService;
  /** The budgets a new user turn is admitted under; none when absent. */
  budgets?: Budgets;
}

/**
 * How many times a request reads and decides again when the session changed between its read and its write
 * (`stale`); past them it is answered as still being answered, retryable.
 */
const MAX_ATTEMPTS = 4;

/**
 * Layer 6 — Entry's admission (docs/architecture.md, "Turn lifecycle"): reads the request's session and turn,
 * decides what it does (`decideTurnRequest`), and has the store apply it under the session's lease in one step,
 * guarded by the session's version (`transact`). It answers what to do with the request as data; running the
 * round is the caller's.
 */
export class TurnAdmission {
  readonly #options: TurnAdmissionOptions;

  constructor(options: TurnAdmissionOptions) {
    this.#options = options;
  }

  admit(key: SessionKey, request: AgentExecuteRequest): Promise<InvokeResult<Admission>> {
    const { catalog, persistence, clock, hashing } = this.#options;
    const hash = requestHash(request, hashing);
    let underBudget = false;
    const decide = async (): Promise<Decision<Admission>> => {
      const state = await persistence.readTurnState(key, request.turnId);
      const now = clock.now();
      const decision = decideTurnRequest({ key, state, request, hash, catalog, now });
      if (decision.type === "answer") {
        const { round, result, stream } = decision;
        return { type: "answer", answer: ok({ type: "stored_answer", round, result, stream }) };
      }
      if (decision.type === "refuse") return { type: "answer", answer: decision.failure };
      if (decision.type === "follow") {
        return { type: "answer", answer: ok({ type: "follow", round: 0, turn: decision.turn }) };
      }
      if ((decision.type === "start_turn" || decision.type === "enqueue_turn") && !underBudget) {
        const refused = await this.#budgetRefusal(key);
        if (refused) {
          await persistence.announceRefusal(key, refused, request.turnId);
          return { type: "answer", answer: refused };
        }
        underBudget = true;
      }
      return {
        type: "apply",
        change: decisionWrite(state, decision, now),
        runsTurn: runsTurn(decision),
        busy: this.#busy(key, request, decision),
        applied: ({ session, lease }) => this.#admitted(decision, session, lease),
      };
    };
    return transact({ persistence, key, decide, attempts: MAX_ATTEMPTS, lostRace: stillAnswering() });
  }

  /**
   * The session's first queued turn, started when no turn holds the session (read along with `turnId`, any turn
   * of it): the round to run under the lease its start claimed, if it started (not while a turn holds the
   * session, nor when another instance started it first or the principal runs its most turns), and whether
   * turns are still queued.
   */
  async startQueued(key: SessionKey, turnId: string): Promise<{ round?: RunningRound; queued: boolean }> {
    const { catalog, persistence, clock } = this.#options;
    const started = await transact<{ round?: RunningRound; queued: boolean }>({
      persistence,
      key,
      attempts: MAX_ATTEMPTS,
      lostRace: ok({ queued: true }),
      decide: async () => {
        const state = await persistence.readTurnState(key, turnId);
        const now = clock.now();
        const dequeue = decideDequeue(state, catalog, now);
        if (!dequeue) return { type: "answer", answer: ok({ queued: state.queued !== undefined }) };
        const { turn, context, request, warnings } = dequeue;
        const opening = { type: "user_turn", request } as const;
        return {
          type: "apply",
          change: decisionWrite(state, dequeue, now),
          runsTurn: runsTurn(dequeue),
          busy: ok({ queued: true }),
          applied: async ({ session, lease }) =>
            ok({ round: { round: 0, lease, session, turn, context, opening, warnings }, queued: true }),
        };
      },
    });
    return started.successful ? started.result : { queued: true };
  }

  /**
   * What a decision answers when another owner holds the session's lease: a background request sent again
   * follows its turn, which is under way; others are refused busy.
   */
  #busy(
    key: SessionKey,
    request: AgentExecuteRequest,
    decision: Exclude<TurnDecision, { type: "answer" | "refuse" | "follow" }>,
  ): InvokeResult<Admission> {
    // A queued turn's write leaves the lease alone: never busy.
    if (decision.type === "enqueue_turn" || decision.busy === "session_busy")
      return sessionBusy(key.sessionId);
    const background = !isToolContinuationRequest(request) && request.background === true;
    return background ? ok({ type: "follow", round: decision.round, turn: decision.turn }) : stillAnswering();
  }

  /**
   * Past a budget no new turn starts, and nothing of it is stored. Judged after the replay check (a request
   * answered before gets its answer again, which spends nothing); rounds of a turn admitted before are let in
   * and judged as they run, so none is left stranded.
   */
  async #budgetRefusal(key: SessionKey): Promise<InvokeFailure | undefined> {
    return this.#options.budgets?.refusal(
      key.principal,
      "no new turn starts until then; nothing of this one was stored.",
    );
  }

  /** The round an applied decision lets in, under the lease it claimed. */
  async #admitted(
    decision: Exclude<TurnDecision, { type: "answer" | "refuse" | "follow" }>,
    session: SessionRecord,
    lease: SessionLease,
  ): Promise<InvokeResult<Admission>> {
    switch (decision.type) {
      case "start_turn": {
        const { turn, context, request, warnings } = decision;
        const opening = { type: "user_turn", request } as const;
        return ok({
          type: "run_round",
          round: 0,
          lease,
          session,
          turn,
          context,
          opening,
          warnings,
          admittedUnderBudget: true,
        });
      }
      case "enqueue_turn":
        return ok({ type: "follow", round: 0, turn: decision.turn });
      case "resume_turn": {
        const { turn, context, request, pending } = decision;
        const opening = { type: "tool_results", toolResults: request.toolResults, pending } as const;
        const round = turn.rounds.length - 1;
        return ok({ type: "run_round", round, lease, session, turn, context, opening, warnings: [] });
      }
      case "fail_round": {
        const { round, turn, failure } = decision;
        return ok({ type: "settle_failure", round, lease, turn, failure });
      }
      case "rerun_round": {
        const { round, turn, context, opening, cursor, warnings } = decision;
        // The earlier attempt's LLM calls stay in the trace: the round's calls number on after them.
        const calls = await releasingOnThrow(lease, () =>
          this.#options.transcripts.listLlmCalls(lease.key, turn.turnId),
        );
        const llmCallCount = Math.max(turn.llmCallCount, (calls.at(-1)?.index ?? -1) + 1);
        return ok({
          type: "run_round",
          round,
          lease,
          session: { ...session, cursor },
          turn: { ...turn, llmCallCount },
          context,
          opening,
          warnings,
          rerun: true,
        });
      }
    }
  }
}

/** Runs `work`, giving `lease` back when it throws: a request that fails unexpectedly leaves the session free. */
async function releasingOnThrow<T>(lease: SessionLease, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    await lease.release();
    throw error;
  }
}
