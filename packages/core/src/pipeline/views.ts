import type { InvokeError, Usage } from "@aptix/contracts";
import type { LlmCallRecord } from "../model/llm-call-record.js";
import type { ModeHistoryEntry } from "../model/mode-history-entry.js";
import type { SessionRecord } from "../model/session-record.js";
import type { ServerToolExecution, TurnRecord, TurnRound, TurnStatus } from "../model/turn-record.js";

/** `GET /v1/sessions/:sessionId`: what a session's owner may see of it. Provider ids stay on the server. */
export interface SessionSummary {
  sessionId: string;
  conversationContextId: string;
  mode: string;
  modeDisplayName: string;
  modeHistory: Array<Omit<ModeHistoryEntry, "principal" | "sessionId">>;
  turns: TurnSummary[];
  createdAt: Date;
  updatedAt: Date;
}

export interface TurnSummary {
  turnId: string;
  sequence: number;
  status: TurnStatus;
  mode: string;
  usage: Usage;
  error: InvokeError | null;
  createdAt: Date;
  completedAt: Date | null;
}

/** `GET …/turns/:turnId/trace`: the out-of-band diagnostics of one turn (AGN-027 §7, AGN-033 §3.1). */
export interface TurnTrace extends TurnSummary {
  /** Each request the turn answered (the user turn, then its continuations) with its stored answer. */
  rounds: TurnRound[];
  llmCalls: Array<Omit<LlmCallRecord, "principal" | "sessionId" | "turnId">>;
  toolExecutions: ServerToolExecution[];
}

function summarizeTurn(turn: TurnRecord): TurnSummary {
  const { turnId, sequence, status, mode, usage, error, createdAt, completedAt } = turn;
  return { turnId, sequence, status, mode, usage, error, createdAt, completedAt };
}

export function summarizeSession(
  session: SessionRecord,
  turns: readonly TurnRecord[],
  history: readonly ModeHistoryEntry[],
  displayNameOf: (modeId: string) => string,
): SessionSummary {
  return {
    sessionId: session.sessionId,
    conversationContextId: session.conversationContextId,
    mode: session.mode,
    modeDisplayName: displayNameOf(session.mode),
    modeHistory: history.map(({ principal: _p, sessionId: _s, ...entry }) => entry),
    turns: turns.map(summarizeTurn),
    createdAt: session.createdAt,
    updatedAt: session.updatedAt,
  };
}

export function traceTurn(turn: TurnRecord, calls: readonly LlmCallRecord[]): TurnTrace {
  return {
    ...summarizeTurn(turn),
    rounds: turn.rounds,
    llmCalls: calls.map(({ principal: _p, sessionId: _s, turnId: _t, ...call }) => call),
    toolExecutions: turn.toolExecutions,
  };
}
