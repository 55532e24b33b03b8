import type { LlmCallInput, LlmCallStep } from "../llm-call/llm-call-step.js";
import type { Clock } from "../ports/clock.js";
import type { LlmCallResult } from "../ports/llm-provider.js";
import type { LlmCallRecord } from "../records/llm-call-record.js";
import type { TurnProgress } from "../records/turn-progress.js";
import { callRecord } from "./call-record.js";

export interface TracedCallInput extends LlmCallInput {
  llmCall: LlmCallStep;
  clock: Clock;
  /** The turn the call is one of: its trace is kept with the turn's calls. */
  turn: { principal: string; sessionId: string; turnId: string };
  /** The turn's progress: the call is numbered after its calls so far, and counted in them. */
  progress: TurnProgress;
}

/** One LLM call of a turn, a model's or a summary's, and its trace (not yet kept: the caller keeps it with what it wrote). */
export async function tracedCall(
  input: TracedCallInput,
): Promise<{ answered: LlmCallResult; record: LlmCallRecord }> {
  const { llmCall, clock, turn, progress, ...call } = input;
  const startedAt = clock.now();
  const answered = await llmCall.run(call);
  const record = callRecord({
    ...turn,
    index: progress.llmCallCount,
    provider: call.provider.id,
    request: call.request,
    startedAt,
    endedAt: clock.now(),
    answered,
  });
  progress.llmCallCount += 1;
  return { answered, record };
}
