import { fail, type InvokeFailure, type InvokeResult, ok } from "@aptix/contracts";
import { CONTINUATION_LOST, type LlmCallOptions, type LlmProvider } from "../ports/llm-provider.js";
import type { LlmRequest } from "../records/llm-request.js";
import type { LlmFinishReason, LlmResponse, LlmToolCall, LlmUsage } from "../records/llm-response.js";
import type { TranscriptItem } from "../records/transcript-item.js";

export interface ScriptedAnswer {
  text?: string;
  toolCalls?: Array<{ name: string; arguments: Record<string, unknown> | string; callId?: string }>;
  finishReason?: LlmFinishReason;
  usage?: Partial<LlmUsage>;
  /** Opaque reasoning state the answer carries, kept in the transcript like a real provider's. */
  reasoning?: unknown;
}

/** One scripted call: an answer, a provider failure, or a function of the request that returns either. */
export type ScriptedStep =
  | ScriptedAnswer
  | { failure: InvokeFailure }
  | ((request: LlmRequest) => ScriptedAnswer | { failure: InvokeFailure });

/**
 * An LlmProvider that answers from a script, for tests of everything above the adapters. Like the real
 * Responses API it remembers the conversation behind each response id (when `storesResponses`), refuses an
 * unknown id as a lost continuation, and refuses any function call left without an output.
 */
export class ScriptedLlmProvider implements LlmProvider {
  readonly id: string;
  readonly storesResponses: boolean;
  /** Every request received, in order (deep copies). */
  readonly requests: LlmRequest[] = [];
  readonly #steps: ScriptedStep[] = [];
  readonly #conversations = new Map<string, TranscriptItem[]>();
  #responses = 0;
  #failingDeletions = 0;

  constructor(options: { id?: string; storesResponses?: boolean } = {}) {
    this.id = options.id ?? "scripted";
    this.storesResponses = options.storesResponses ?? true;
  }

  enqueue(...steps: ScriptedStep[]): this {
    this.#steps.push(...steps);
    return this;
  }

  get remainingSteps(): number {
    return this.#steps.length;
  }

  /** Drops a stored response, as a provider does when it expires one. */
  forget(responseId: string): void {
    this.#conversations.delete(responseId);
  }

  /** The ids of the responses it stores now. */
  storedResponseIds(): string[] {
    return [...this.#conversations.keys()];
  }

  /** The next `count` calls of `deleteStoredResponse` fail (as a provider down would), deleting nothing. */
  failNextDeletions(count: number): this {
    this.#failingDeletions = count;
    return this;
  }

  async deleteStoredResponse(
    responseId: string,
  ): Promise<{ deleted: true } | { deleted: false; reason: string }> {
    if (this.#failingDeletions > 0) {
      this.#failingDeletions -= 1;
      return { deleted: false, reason: "HTTP 503 (scripted)" };
    }
    this.#conversations.delete(responseId);
    return { deleted: true };
  }

  async call(request: LlmRequest, options: LlmCallOptions = {}): Promise<InvokeResult<LlmResponse>> {
    this.requests.push(structuredClone(request));
    const history = this.#history(request);
    if (!history.successful) return history;
    const conversation = [...history.result, ...request.input];
    const unanswered = unansweredCall(conversation);
    if (unanswered) return providerError(`No tool output found for function call ${unanswered}.`, 400);

    const step = this.#steps.shift();
    if (step === undefined) return providerError("The scripted provider's script ran out.", 500);
    const scripted = typeof step === "function" ? step(request) : step;
    if ("failure" in scripted) return scripted.failure;

    this.#responses += 1;
    const toolCalls: LlmToolCall[] = (scripted.toolCalls ?? []).map((call, index) => ({
      callId: call.callId ?? `call_${this.#responses}_${index + 1}`,
      name: call.name,
      argumentsJson: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments),
    }));
    const text = scripted.text ?? "";
    const output: TranscriptItem[] = [
      ...(scripted.reasoning === undefined
        ? []
        : [{ type: "reasoning" as const, provider: this.id, data: scripted.reasoning }]),
      ...(text === "" ? [] : [{ type: "assistant_message" as const, text }]),
      ...toolCalls.map((call) => ({ type: "function_call" as const, ...call })),
    ];
    for (const word of text.match(/\S+\s*/g) ?? []) options.onTextDelta?.(word);
    const responseId = this.storesResponses ? `resp_${this.#responses}` : undefined;
    if (responseId) this.#conversations.set(responseId, [...conversation, ...output]);
    const response: LlmResponse = {
      output,
      text,
      toolCalls,
      usage: { inputTokens: 10, outputTokens: 5, ...scripted.usage },
      finishReason: scripted.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop"),
      trace: {
        providerRequest: { scripted: true, inputItems: request.input.length },
        providerResponse: { responseId, text },
      },
    };
    if (responseId) response.responseId = responseId;
    return ok(response);
  }

  #history(request: LlmRequest): InvokeResult<TranscriptItem[]> {
    const continuation = request.continuation;
    if (continuation.type === "none") return ok([]);
    if (continuation.type === "replay") return ok(continuation.items);
    const stored = this.#conversations.get(continuation.responseId);
    if (!stored) {
      return fail("PROVIDER_ERROR", `Previous response with id '${continuation.responseId}' not found.`, {
        status: 400,
        reason: CONTINUATION_LOST,
      });
    }
    return ok(stored);
  }
}

function unansweredCall(items: readonly TranscriptItem[]): string | undefined {
  const answered = new Set(
    items.flatMap((item) => (item.type === "function_call_output" ? [item.callId] : [])),
  );
  for (const item of items) {
    if (item.type === "function_call" && !answered.has(item.callId)) return item.callId;
  }
  return undefined;
}

function providerError(message: string, status: number): InvokeFailure {
  return fail("PROVIDER_ERROR", message, { status });
}
