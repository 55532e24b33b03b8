import type {
  TurnTrace as ContractTurnTrace,
  SessionSummary,
  SessionUsage,
  TurnStateView,
  TurnSummary,
} from "@aptix/contracts";
import type { CompactionRecord } from "../records/compaction-record.js";
import type { LlmCallRecord } from "../records/llm-call-record.js";
import type { ModeHistoryEntry } from "../records/mode-history-entry.js";
import type { SessionRecord } from "../records/session-record.js";
import type { ServerToolExecution, TurnRecord, TurnRound } from "../records/turn-record.js";

/**
 * The session views are defined once, as zod schemas in @aptix/contracts (`SessionSummarySchema`,
 * `TurnTraceSchema`): these are their types with `Date` timestamps. A trace's LLM calls and rounds are
 * diagnostics the contract leaves open; here they keep core's own record types.
 */
export type { SessionSummary } from "@aptix/contracts";

export interface TurnTrace extends Omit<ContractTurnTrace, "rounds" | "llmCalls" | "toolExecutions"> {
  /** Each request the turn answered (the user turn, then its continuations) with its stored answer. */
  rounds: TurnRound[];
  llmCalls: Array<Omit<LlmCallRecord, "callId" | "principal" | "sessionId" | "turnId" | "provider">>;
  toolExecutions: ServerToolExecution[];
}

export function summarizeTurn(turn: TurnRecord): TurnSummary {
  const { turnId, sequence, status, mode, usage, error, createdAt, completedAt } = turn;
  return { turnId, sequence, status, mode, usage, error, createdAt, completedAt };
}

/**
 * A turn as `GET …/turns/:turnId` shows it: its status and, once its latest round has its answer, that answer as
 * the client waiting for the round got it (`result` or `errors`).
 */
export function turnStateView(turn: TurnRecord): TurnStateView {
  const answer = turn.rounds.at(-1)?.result;
  const { turnId, status } = turn;
  if (!answer) return { turnId, status };
  return answer.successful
    ? { turnId, status, result: answer.result }
    : { turnId, status, errors: answer.errors };
}

export function summarizeSession(input: {
  session: SessionRecord;
  turns: readonly TurnRecord[];
  history: readonly ModeHistoryEntry[];
  compactions: readonly CompactionRecord[];
  usage: SessionUsage;
  contextWindowTokens: number;
  displayNameOf: (modeId: string) => string;
}): SessionSummary {
  const { session } = input;
  return {
    sessionId: session.sessionId,
    conversationContextId: session.conversationContextId,
    mode: session.mode,
    modeDisplayName: input.displayNameOf(session.mode),
    modeHistory: input.history.map(({ principal: _p, sessionId: _s, ...entry }) => entry),
    turns: input.turns.map(summarizeTurn),
    usage: input.usage,
    contextTokens: session.cursor.chainTokens?.input ?? null,
    contextWindowTokens: input.contextWindowTokens,
    compactions: input.compactions.map(({ turnId, reason, tokensBefore, tokensAfter, createdAt }) => ({
      turnId,
      reason,
      tokensBefore,
      tokensAfter,
      createdAt,
    })),
    ...(session.forkedFrom
      ? {
          forkedFrom: {
            sessionId: session.forkedFrom.sessionId,
            ...(session.forkedFrom.turnId === null ? {} : { turnId: session.forkedFrom.turnId }),
          },
        }
      : {}),
    createdAt: session.createdAt,
    updatedAt: session.updatedAt,
  };
}

export function traceTurn(
  turn: TurnRecord,
  calls: readonly LlmCallRecord[],
  costUsd: number | null,
): TurnTrace {
  return {
    ...summarizeTurn(turn),
    rounds: turn.rounds,
    // The call's id keys its usage inside the store; the trace names a call by its index.
    llmCalls: calls.map(
      ({ callId: _c, principal: _p, sessionId: _s, turnId: _t, provider: _v, ...call }) => call,
    ),
    toolExecutions: turn.toolExecutions,
    costUsd,
  };
}
