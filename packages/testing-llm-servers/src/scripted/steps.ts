/** The script steps that mean the same for every API: their timing, a verbatim body, a dropped connection, an HTTP error. */
import type { VerbatimAnswer } from "./scripted-exchange.js";

export interface StepTiming {
  /** Wait this long before answering anything (before the status line). */
  delayMs?: number;
}

/** A verbatim body (e.g. invalid JSON, or JSON that is not what the API answers). */
export interface RawStep extends StepTiming, VerbatimAnswer {
  kind: "raw";
}

/** Destroy the connection without answering. */
export interface DropStep extends StepTiming {
  kind: "drop";
}

/** What every API's error step has; each API adds the fields of its error body. */
export interface HttpErrorStep extends StepTiming {
  kind: "error";
  status: number;
  /** Sets the `retry-after` header (seconds). */
  retryAfter?: number | string;
  headers?: Record<string, string>;
  /** Replaces the whole JSON body. */
  body?: unknown;
}

/** The headers an error step is answered with: its own, and `retry-after` when it sets one. */
export function errorStepHeaders(stepObject: HttpErrorStep): Record<string, string> {
  const headers: Record<string, string> = { ...stepObject.headers };
  if (stepObject.retryAfter !== undefined) headers["retry-after"] = String(stepObject.retryAfter);
  return headers;
}

/**
 * The builders every API has: `text`, `reply`, `error`, `raw` and `drop`; `defaultRawBody` is a truncated
 * (invalid) JSON answer of the API.
 */
export function commonStepBuilders<
  Reply extends StepTiming & { kind: "reply"; text?: string | string[] },
  ErrorStep extends HttpErrorStep,
>(defaultRawBody: string) {
  return {
    /** An assistant text answer; an array is streamed as those deltas. */
    text(
      text: string | string[],
      options: Omit<Reply, "kind" | "text"> = {} as Omit<Reply, "kind" | "text">,
    ): Reply {
      return { kind: "reply", ...options, text } as Reply;
    },
    /** Any reply. */
    reply(options: Omit<Reply, "kind">): Reply {
      return { kind: "reply", ...options } as Reply;
    },
    /** An HTTP error with the API's error body. */
    error(
      status: number,
      options: Omit<ErrorStep, "kind" | "status"> = {} as Omit<ErrorStep, "kind" | "status">,
    ): ErrorStep {
      return { kind: "error", status, ...options } as ErrorStep;
    },
    /** A verbatim body; default is truncated (invalid) JSON. */
    raw(body = defaultRawBody, options: Omit<RawStep, "kind" | "body"> = {}): RawStep {
      return { kind: "raw", body, ...options };
    },
    /** Destroy the connection without answering. */
    drop(options: Omit<DropStep, "kind"> = {}): DropStep {
      return { kind: "drop", ...options };
    },
  };
}
