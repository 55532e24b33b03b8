import type { AgentExecuteResponse, UserTurnRequest } from "@aptix/contracts";
import type { ApprovalAnswer, ApprovalRequest } from "./approval-request.js";
import type { ToolHandler } from "./tool-handler.js";
import type { TurnStreamEvent } from "./turn-stream-event.js";

/** A user turn (every field of `UserTurnRequest` but `stream`), the client's tools and what to do with text. */
export type RunTurnOptions = Omit<UserTurnRequest, "turnId" | "stream"> & {
  /** Minted with `crypto.randomUUID()` when absent. */
  turnId?: string;
  /** The client tools this client runs, by name. A call of any other tool is answered with `errorMessage`. */
  tools: Readonly<Record<string, ToolHandler>>;
  /**
   * Asked for each call of a server tool configured to ask first (the service's `aptix_approve` call): answer
   * `true` to run it, `false` or `{ approved: false, message }` to decline. Without it, every such call is declined.
   */
  approve?: (request: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>;
  /**
   * With either callback the turn streams: `onTextDelta` gets each piece of text as it arrives (and the text
   * shown so far), `onTextReset` says the text shown so far was dropped.
   */
  onTextDelta?: (delta: string, text: string) => void;
  onTextReset?: () => void;
  /** The service compacted the conversation before one of the turn's LLM calls (streamed turns only). */
  onCompacted?: (
    compaction: Omit<Extract<TurnStreamEvent, { type: "context.compacted" }>, "type" | "id">,
  ) => void;
  /**
   * Each round's answer, as it arrives: the continuations (before their tool calls run) and the final response.
   * A client that shows the session's mode sees a change here (`modeDisplayName`) while the turn goes on.
   */
  onResponse?: (response: AgentExecuteResponse) => void;
  /** Aborting stops the turn's requests, retries, streams and the tool loop (the service finishes the round). */
  signal?: AbortSignal;
};
