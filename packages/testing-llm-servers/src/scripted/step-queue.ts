/** The pending scripted steps of a server, and how the next one is taken for a request. */
import type { ScriptedRequestRecord } from "./recorded-request.js";

/** A step: an object, a string (shorthand for a text reply), or a function of the request that returns one. */
export type QueuedStep<Step, R> = string | Step | ((request: R) => string | Step | Promise<string | Step>);

/** The step for a request, or why there is none (`message` says so, for the harness's 500 answer). */
export type TakenStep<Step> = { step: Step } | { failure: "exhausted" | "threw"; message: string };

/** Steps are taken in order, one per request that reaches the "model"; tests replace or append them at any time. */
export class StepQueue<Step extends object, R extends ScriptedRequestRecord> {
  private steps: QueuedStep<Step, R>[];
  private readonly textReply: (text: string) => Step;

  constructor(options: {
    /** The steps to start with. */
    initial?: QueuedStep<Step, R>[];
    /** Turns the string shorthand into the API's text reply step. */
    textReply(text: string): Step;
  }) {
    this.steps = [...(options.initial ?? [])];
    this.textReply = options.textReply;
  }

  get size(): number {
    return this.steps.length;
  }

  replace(steps: QueuedStep<Step, R>[]): void {
    this.steps = [...steps];
  }

  append(steps: QueuedStep<Step, R>[]): void {
    this.steps.push(...steps);
  }

  clear(): void {
    this.steps = [];
  }

  /**
   * Takes the next step for `record` (marking it `consumedStep`), resolves a step function against it and turns
   * a string into a text reply.
   */
  async take(record: R): Promise<TakenStep<Step>> {
    const next = this.steps.shift();
    if (next === undefined) {
      return {
        failure: "exhausted",
        message: `testing-llm-servers: the script ran out: no step left for request #${record.index} (${record.method} ${record.path}). Script more steps with server.script(...) / server.enqueue(...).`,
      };
    }
    record.consumedStep = true;
    try {
      const step = typeof next === "function" ? await next(record) : next;
      return { step: typeof step === "string" ? this.textReply(step) : step };
    } catch (error) {
      return {
        failure: "threw",
        message: `testing-llm-servers: the scripted step for request #${record.index} threw: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  }
}
