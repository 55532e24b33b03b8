import { fail } from "@aptix/contracts";
import { errorMessage } from "../error-message.js";
import type { LlmCallOptions, LlmCallResult, LlmProvider } from "../ports/llm-provider.js";
import { type TurnObserver, unobserved } from "../ports/turn-observer.js";
import type { LlmRequest } from "../records/llm-request.js";
import { storableDeltas } from "./storable-deltas.js";
import { storableResult } from "./storable-result.js";

export interface LlmCallInput {
  provider: LlmProvider;
  request: LlmRequest;
  options?: LlmCallOptions;
}

/**
 * Layer 2 — LLM Call (AGN-027 C): exactly one provider call. It changes nothing in the request and
 * checks the answer is usable: an adapter that throws, or tool calls without ids, become PROVIDER_ERROR. What
 * the provider answered, streamed text included, is made storable here (`storableResult`), where it enters core, so
 * no adapter and no later layer has to: a NUL or lone surrogate in a model's text, tool arguments or summary
 * becomes U+FFFD.
 */
export class LlmCallStep {
  /** `observer` watches each call, from the request sent to the answer checked. */
  constructor(private readonly observer: TurnObserver = unobserved) {}

  run(input: LlmCallInput): Promise<LlmCallResult> {
    const { provider, request, options } = input;
    return this.observer.llmCall(
      {
        provider: provider.id,
        model: request.model,
        ...(request.maxOutputTokens !== undefined ? { maxOutputTokens: request.maxOutputTokens } : {}),
        streaming: options?.onTextDelta !== undefined,
      },
      () => this.#call(input),
    );
  }

  async #call(input: LlmCallInput): Promise<LlmCallResult> {
    const { onTextDelta } = input.options ?? {};
    const deltas = onTextDelta && storableDeltas(onTextDelta);
    const options = deltas ? { ...input.options, onTextDelta: deltas.onTextDelta } : input.options;
    const result = await this.#checked({ ...input, ...(options ? { options } : {}) });
    deltas?.flush();
    return storableResult(result);
  }

  async #checked({ provider, request, options }: LlmCallInput): Promise<LlmCallResult> {
    let result: LlmCallResult;
    try {
      result = await provider.call(request, options);
    } catch (error) {
      return fail("PROVIDER_ERROR", `The ${provider.id} adapter failed: ${errorMessage(error)}`, {
        provider: provider.id,
      });
    }
    if (!result.successful) return result;
    const callIds = result.result.toolCalls.map((call) => call.callId);
    if (callIds.some((id) => id === "") || new Set(callIds).size !== callIds.length) {
      return fail("PROVIDER_ERROR", `The ${provider.id} response has tool calls without unique ids.`, {
        provider: provider.id,
      });
    }
    return result;
  }
}
