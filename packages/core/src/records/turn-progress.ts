import type { FileRef, InvokeWarning, RetrievalTrace, Usage } from "@aptix/contracts";
import type { ConversationCursor } from "./conversation-cursor.js";
import type { LlmUsage } from "./llm-response.js";
import type { ServerToolExecution } from "./turn-record.js";

/**
 * What a turn has done so far, across all its rounds. The Reasoner adds to it as it goes, so a turn that
 * fails half-way still records its usage, tool runs and files.
 */
export interface TurnProgress {
  cursor: ConversationCursor;
  usage: Usage;
  llmCallCount: number;
  toolExecutions: ServerToolExecution[];
  files: FileRef[];
  warnings: InvokeWarning[];
  /** The user turn's retrieval for its `[CONTEXT]` block, kept on its round for the trace. */
  retrieval?: RetrievalTrace;
}

export function addUsage(total: Usage, call: LlmUsage): Usage {
  const sum: Usage = {
    inputTokens: total.inputTokens + call.inputTokens,
    outputTokens: total.outputTokens + call.outputTokens,
    totalTokens: total.totalTokens + call.inputTokens + call.outputTokens,
    llmCalls: (total.llmCalls ?? 0) + 1,
  };
  const cached = (total.cachedInputTokens ?? 0) + (call.cachedInputTokens ?? 0);
  const reasoning = (total.reasoningTokens ?? 0) + (call.reasoningTokens ?? 0);
  if (total.cachedInputTokens !== undefined || call.cachedInputTokens !== undefined)
    sum.cachedInputTokens = cached;
  if (total.reasoningTokens !== undefined || call.reasoningTokens !== undefined)
    sum.reasoningTokens = reasoning;
  return sum;
}

export const NO_USAGE: Usage = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  totalTokens: 0,
  llmCalls: 0,
}) as Usage;
