/** Answers a scripted step: the parts every API answers alike, and a call-back for the parts each writes its own way. */
import type { ScriptedAnswer, ScriptedRequestRecord } from "./recorded-request.js";
import type { ScriptedExchange } from "./scripted-exchange.js";
import { pauseUnlessAborted } from "./step-timing.js";
import {
  type DropStep,
  errorStepHeaders,
  type HttpErrorStep,
  type RawStep,
  type StepTiming,
} from "./steps.js";

export interface StepAnswerers<Reply, ErrorStep> {
  /** Headers of a `raw` answer, before the step's own. */
  rawHeaders?: Record<string, string>;
  /** Sends an `error` step's body; `headers` are the step's (with `retry-after`). */
  error(stepObject: ErrorStep, headers: Record<string, string>): void;
  /** Answers a `reply` step (a JSON body, or a stream for `stream: true`). */
  reply(stepObject: Reply): Promise<void> | void;
}

/** Waits the step's `delayMs` (unless the client went away), then answers it. */
export async function answerStep<
  Reply extends StepTiming & { kind: "reply" },
  ErrorStep extends HttpErrorStep,
  R extends ScriptedRequestRecord<ScriptedAnswer, unknown>,
>(
  exchange: ScriptedExchange<R>,
  stepObject: Reply | ErrorStep | RawStep | DropStep,
  answerers: StepAnswerers<Reply, ErrorStep>,
): Promise<void> {
  await pauseUnlessAborted(stepObject.delayMs ?? 0, exchange.signal);
  if (exchange.signal.aborted) return;
  switch (stepObject.kind) {
    case "drop":
      return exchange.drop();
    case "raw":
      return exchange.sendRaw(stepObject, answerers.rawHeaders);
    case "error":
      return answerers.error(stepObject, errorStepHeaders(stepObject));
    case "reply":
      return answerers.reply(stepObject);
  }
}
