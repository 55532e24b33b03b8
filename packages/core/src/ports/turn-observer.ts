import type { AgentExecuteResponse, InvokeResult } from "@aptix/contracts";
import type { Retrieval } from "./context-retriever.js";
import type { LlmCallResult } from "./llm-provider.js";

/**
 * A round of a turn, as it starts: what names it, never what the user wrote.
 * @public
 */
export interface ObservedRound {
  sessionId: string;
  turnId: string;
  /** 0 for the user turn's round, then one per tool continuation. */
  round: number;
  /** The turn's mode. */
  mode: string;
  /** The conversation context's provider id and model. */
  provider: string;
  model: string;
}

/**
 * One LLM call, as it starts.
 * @public
 */
export interface ObservedLlmCall {
  /** The provider's id (`ConversationContext.provider`), e.g. `openai`. */
  provider: string;
  model: string;
  maxOutputTokens?: number;
  /** Whether its text streams as it arrives. */
  streaming: boolean;
}

/**
 * One run of a server tool whose arguments passed their checks.
 * @public
 */
export interface ObservedToolRun {
  name: string;
  callId: string;
}

/**
 * How a server tool run ended: its result or its own error message (both go back to the model), or a failure
 * (it threw, timed out or was cancelled) that fails the turn.
 */
export type ToolRunResult = InvokeResult<{ result: unknown; resultJson: string } | { errorMessage: string }>;

/**
 * One turn-time retrieval, as it starts.
 * @public
 */
export interface ObservedRetrieval {
  workspaceId: string;
  limit: number;
}

/**
 * One compaction of a conversation (docs/context-window.md), as it starts.
 * @public
 */
export interface ObservedCompaction {
  reason: "threshold" | "overflow" | "manual";
  provider: string;
  model: string;
  /** The estimate of the call it makes room for. */
  tokensBefore: number;
}

/**
 * How a compaction ended: the compacted chain's estimate, nothing to compact, or a failure that fails the turn.
 * @public
 */
export type CompactionResult = InvokeResult<{ tokensAfter: number } | undefined>;

/**
 * Watches the work of turns without taking part in it (traces, metrics): each method runs `run` once, returns
 * what it returns (or throws what it throws) and may look at it on the way. Core calls each at the layer that
 * does the work: `round` around a round (Entry), `llmCall` around one provider call (LLM Call), `toolRun` around
 * one server tool run (Server Tools), `retrieval` around the turn's workspace search (Composition), `compaction`
 * around a compaction (Reasoner: its summarising call and its write). What it is
 * given names the work and never carries the instruction, prompts or completions. An observer must not throw.
 */
export interface TurnObserver {
  round(
    round: ObservedRound,
    run: () => Promise<InvokeResult<AgentExecuteResponse>>,
  ): Promise<InvokeResult<AgentExecuteResponse>>;
  llmCall(call: ObservedLlmCall, run: () => Promise<LlmCallResult>): Promise<LlmCallResult>;
  toolRun(tool: ObservedToolRun, run: () => Promise<ToolRunResult>): Promise<ToolRunResult>;
  retrieval(query: ObservedRetrieval, run: () => Promise<Retrieval>): Promise<Retrieval>;
  compaction<T extends CompactionResult>(compaction: ObservedCompaction, run: () => Promise<T>): Promise<T>;
  /**
   * Told, inside the round it failed (`round`), of what was thrown when a round failed unexpectedly (a store's or a bug's
   * error, never the client's doing): its detail is the operator's to see (a trace, a log line), while the answer
   * says only INTERNAL. It may quote a statement and its parameters, so never the client's.
   */
  fault?(round: ObservedRound, error: unknown): void;
}

/** Watches nothing: each run as it is. */
export const unobserved: TurnObserver = {
  round: (_round, run) => run(),
  llmCall: (_call, run) => run(),
  toolRun: (_tool, run) => run(),
  retrieval: (_query, run) => run(),
  compaction: (_compaction, run) => run(),
};
