import type {
  AgentExecuteRequest,
  AgentExecuteResponse,
  FileRef,
  InvokeError,
  InvokeResult,
  RetrievalTrace,
  TurnStatus,
  Usage,
} from "@aptix/contracts";
import type { ConversationCursor } from "./conversation-cursor.js";
import type { LlmToolCall } from "./llm-response.js";
import type { SessionKey } from "./session-record.js";
import type { FunctionCallOutputItem } from "./transcript-item.js";

/** running → completed | awaiting_client_tools | failed; awaiting_client_tools → running | failed | abandoned. */
export type { TurnStatus };

/**
 * One request the turn answered: the user turn itself, then each tool continuation. Keeping the hash and
 * the answer of each is what makes a repeated request return its stored answer without calling the LLM.
 */
export interface TurnRound {
  /** The request as it was received: the turn's record of what the client asked. */
  request: AgentExecuteRequest;
  requestHash: string;
  /** Absent while the round runs. */
  result?: InvokeResult<AgentExecuteResponse>;
  /** A user turn's retrieval for its `[CONTEXT]` block: workspace, query, chunks (docs/knowledge.md). */
  retrieval?: RetrievalTrace;
}

/**
 * What a turn that awaits client tools is waiting for. It stays on the turn while the continuation round that
 * answers it runs, so that round can be run again when its instance stops before it finishes.
 */
export interface PendingToolCalls {
  /** Every call of the response that paused the turn, in the model's order. */
  calls: LlmToolCall[];
  /** The client's share of `calls`, in order: a continuation must answer exactly these (AGN-033 §3.3). */
  clientCallIds: string[];
  /** Outputs of that response's server calls, held until the client's results arrive. */
  serverOutputs: FunctionCallOutputItem[];
  /**
   * Calls of server tools that ask first (docs/server-tools.md), as read, awaiting the client's `aptix_approve` answer (their
   * ids are among `clientCallIds`): run when approved, answered as declined otherwise.
   */
  approvals?: LlmToolCall[];
  /** The session's cursor before the call that asked for these tools, restored if the turn is abandoned. */
  resumeCursor: ConversationCursor;
  /**
   * The session's cursor when the continuation round started: where that round starts again when it is sent
   * again after its instance stopped. Set as the round starts; absent while the turn awaits client tools.
   */
  continueCursor?: ConversationCursor;
}

/** A server-side tool run, kept for the trace and shown in the final response's `toolResults`. */
export interface ServerToolExecution {
  toolCallId: string;
  name: string;
  argumentsJson: string;
  /** For a tool that asks first: the user's answer, and who gave it (the principal). */
  approval?: { approved: boolean; decidedBy: string };
  resultJson?: string;
  errorMessage?: string;
  /** When the run (or the check that refused it) started; absent on runs recorded before it was kept. */
  startedAt?: Date;
  executionMs: number;
}

export interface TurnRecord extends SessionKey {
  turnId: string;
  sequence: number;
  status: TurnStatus;
  /** The session's mode when the turn started (AGN-011 §3.2 snapshot). */
  mode: string;
  /** Whether the user turn asked for a streamed answer; its continuations stream too. */
  stream: boolean;
  rounds: TurnRound[];
  /** Set while the turn awaits client tools and while the continuation round answering them runs. */
  pending: PendingToolCalls | null;
  /** The cursor the turn started from, restored when it fails. */
  startCursor: ConversationCursor;
  toolExecutions: ServerToolExecution[];
  files: FileRef[];
  /** Summed over every successful LLM call of the turn. */
  usage: Usage;
  /** LLM calls attempted so far, failed ones included: the next call's trace index. */
  llmCallCount: number;
  error: InvokeError | null;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
}

/** The turn fields that change as it runs. */
export type TurnPatch = Partial<
  Pick<
    TurnRecord,
    | "status"
    | "rounds"
    | "pending"
    | "toolExecutions"
    | "files"
    | "usage"
    | "llmCallCount"
    | "error"
    | "completedAt"
    // Set as a queued turn starts: the session's cursor and mode then.
    | "startCursor"
    | "mode"
  >
>;
