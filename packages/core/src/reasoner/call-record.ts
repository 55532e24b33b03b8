import { randomUUID } from "node:crypto";
import type { LlmCallResult } from "../ports/llm-provider.js";
import type { LlmCallRecord } from "../records/llm-call-record.js";
import type { LlmContinuation, LlmRequest } from "../records/llm-request.js";
import type { LlmResponse } from "../records/llm-response.js";

/** The trace of one LLM call of a turn (its `index`-th), as the store keeps it: ids and payloads out of the answer. */
export function callRecord(input: {
  principal: string;
  sessionId: string;
  turnId: string;
  index: number;
  provider: string;
  request: LlmRequest;
  startedAt: Date;
  endedAt: Date;
  answered: LlmCallResult;
}): LlmCallRecord {
  const { answered } = input;
  const { trace, ...response } = answered.successful ? answered.result : { trace: answered.trace };
  return {
    callId: randomUUID(),
    principal: input.principal,
    sessionId: input.sessionId,
    turnId: input.turnId,
    index: input.index,
    provider: input.provider,
    request: { ...input.request, continuation: traced(input.request.continuation) },
    response: answered.successful ? (response as Omit<LlmResponse, "trace">) : null,
    providerRequest: trace?.providerRequest ?? null,
    providerResponse: trace?.providerResponse ?? null,
    error: answered.successful ? null : answered.errors[0],
    startedAt: input.startedAt,
    durationMs: input.endedAt.getTime() - input.startedAt.getTime(),
  };
}

type TracedContinuation = NonNullable<LlmCallRecord["request"]>["continuation"];

/** A replay is traced as its item count: the items are in the transcript already. */
function traced(continuation: LlmContinuation): TracedContinuation {
  return continuation.type === "replay"
    ? { type: "replay", itemCount: continuation.items.length }
    : continuation;
}
