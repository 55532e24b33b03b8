import type { LlmCallOptions, LlmRequest } from "@aptix/core";
import { ScriptedLlmProvider } from "@aptix/core/testing";

/** A scripted provider whose next call waits until the test lets it answer: a turn that is still running. */
export class HeldProvider extends ScriptedLlmProvider {
  #gate: Promise<void> | undefined;
  #entered: (() => void) | undefined;

  hold(): { entered: Promise<void>; release: () => void } {
    let release!: () => void;
    this.#gate = new Promise((resolve) => {
      release = resolve;
    });
    const entered = new Promise<void>((resolve) => {
      this.#entered = resolve;
    });
    return { entered, release };
  }

  override async call(request: LlmRequest, options?: LlmCallOptions) {
    const gate = this.#gate;
    this.#gate = undefined;
    this.#entered?.();
    if (gate) await gate;
    return super.call(request, options);
  }
}
