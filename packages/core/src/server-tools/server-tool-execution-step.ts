import { type FileRef, fail, type InvokeResult, ok } from "@aptix/contracts";
import { errorMessage } from "../error-message.js";
import type { PipelineStep } from "../pipeline-step.js";
import type { Clock } from "../ports/clock.js";
import type { LlmToolCall } from "../records/llm-response.js";
import type { FunctionCallOutputItem } from "../records/transcript-item.js";
import type { ServerToolExecution } from "../records/turn-record.js";
import type { FileKeeper } from "./file-keeper.js";
import type { ServerTool, ServerToolContext } from "./server-tool.js";
import type { ServerToolRegistry } from "./server-tool-registry.js";

/** `APTIX_TOOL_TIMEOUT_MS` when unset: the longest a server tool may run. */
export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;

export interface ServerToolExecutionStepOptions {
  registry: ServerToolRegistry;
  clock: Clock;
  files: FileKeeper;
  /** The longest one server tool may run before the turn fails with TOOL_FAILED. */
  toolTimeoutMs?: number;
}

export interface ServerToolExecutionInput {
  calls: LlmToolCall[];
  context: Omit<ServerToolContext, "files" | "signal">;
}

export interface ServerToolExecutionOutcome {
  /** Outputs of the calls the server answered (tool results and refusals), in call order. */
  outputs: FunctionCallOutputItem[];
  /** The runs of server tools (argument refusals included), for the final response's `toolResults`. */
  executions: ServerToolExecution[];
  /** The calls left for the client, in call order. */
  clientCalls: LlmToolCall[];
  /** The files the tools stored, in the order they were kept. */
  files: FileRef[];
  /** Successful executions' parsed results by call id, for the Reasoner to act on (mode changes). */
  results: Map<string, unknown>;
}

/**
 * Layer 3 — Server Tool Execution (AGN-027 D): runs server tools sequentially in call order. A name the
 * registry does not hold is a client tool. Arguments that are not JSON, or that the tool refuses, go back
 * to the model as an error output so it can correct itself, and so does a tool's own `errorMessage`; an
 * executor that throws or outlives `toolTimeoutMs` fails the turn with TOOL_FAILED (502).
 */
export class ServerToolExecutionStep
  implements PipelineStep<ServerToolExecutionInput, ServerToolExecutionOutcome>
{
  private readonly registry: ServerToolRegistry;
  private readonly clock: Clock;
  private readonly files: FileKeeper;
  private readonly toolTimeoutMs: number;

  constructor(options: ServerToolExecutionStepOptions) {
    ({ registry: this.registry, clock: this.clock, files: this.files } = options);
    this.toolTimeoutMs = options.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  }

  /**
   * Whether `run` would run no server tool for `calls` and hand at least one to the client: the round ends
   * with them, and nothing runs before its settlement.
   */
  handsRoundToClient(calls: readonly LlmToolCall[]): boolean {
    return (
      calls.every((call) => !this.registry.has(call.name)) &&
      calls.some((call) => goesToClient(call, parseArgumentsObject(call.argumentsJson)))
    );
  }

  async run({ calls, context }: ServerToolExecutionInput): Promise<InvokeResult<ServerToolExecutionOutcome>> {
    const outcome: ServerToolExecutionOutcome = {
      outputs: [],
      executions: [],
      clientCalls: [],
      files: [],
      results: new Map(),
    };
    for (const call of calls) {
      const tool = this.registry.get(call.name);
      // Neither the server nor a client can run a call whose arguments are not a JSON object: the model must retry.
      const args = parseArgumentsObject(call.argumentsJson);
      if (!tool) {
        // Any other call goes back to the model; the server ran nothing, so it is no server tool result.
        if (goesToClient(call, args)) outcome.clientCalls.push(call);
        else outcome.outputs.push(errorOutput(call, args === undefined ? NOT_AN_OBJECT : NO_SUCH_TOOL));
        continue;
      }
      if (args === undefined) {
        this.#refuse(outcome, call, NOT_AN_OBJECT, 0);
        continue;
      }
      const started = this.clock.now().getTime();
      const parsed = tool.parseArguments(args);
      if (!parsed.ok) {
        this.#refuse(outcome, call, parsed.message, this.clock.now().getTime() - started);
        continue;
      }
      const ran = await this.#execute(tool, parsed.value, call, context, outcome.files);
      if (!ran.successful) return ran;
      const executionMs = this.clock.now().getTime() - started;
      const base = {
        toolCallId: call.callId,
        name: call.name,
        argumentsJson: call.argumentsJson,
        executionMs,
      };
      if ("errorMessage" in ran.result) {
        const { errorMessage } = ran.result;
        outcome.outputs.push({
          type: "function_call_output",
          callId: call.callId,
          output: errorMessage,
          isError: true,
        });
        outcome.executions.push({ ...base, errorMessage });
        continue;
      }
      const { result, resultJson } = ran.result;
      outcome.outputs.push({
        type: "function_call_output",
        callId: call.callId,
        output: resultJson,
        isError: false,
      });
      outcome.executions.push({ ...base, resultJson });
      outcome.results.set(call.callId, result);
    }
    return ok(outcome);
  }

  /** One run, bounded by `toolTimeoutMs`: the tool's signal is aborted when the turn stops waiting for it. */
  async #execute(
    tool: ServerTool,
    args: unknown,
    call: LlmToolCall,
    turn: ServerToolExecutionInput["context"],
    kept: FileRef[],
  ): Promise<InvokeResult<{ result: unknown; resultJson: string } | { errorMessage: string }>> {
    const abort = new AbortController();
    const context: ServerToolContext = {
      ...turn,
      signal: abort.signal,
      files: {
        maxBytes: this.files.maxBytes,
        keep: async (file) => {
          const stored = await this.files.keep(turn.principal, file);
          kept.push(stored.ref);
          return stored;
        },
      },
    };
    const failed = (message: string, extra: Record<string, unknown> = {}) =>
      fail("TOOL_FAILED", `Server tool ${call.name} failed: ${message}`, {
        tool: call.name,
        toolCallId: call.callId,
        ...extra,
      });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), this.toolTimeoutMs);
    });
    try {
      const answered = await Promise.race([tool.execute(args, context), timedOut]);
      if (answered !== "timeout") {
        if ("errorMessage" in answered) return ok({ errorMessage: answered.errorMessage });
        // A result that is not JSON (a bigint, a cycle) is the tool's bug, not the model's.
        return ok({ result: answered.result, resultJson: JSON.stringify(answered.result ?? null) });
      }
      abort.abort(new Error(`ran longer than ${this.toolTimeoutMs} ms`));
      return failed(`it ran longer than ${this.toolTimeoutMs} ms`, { timeoutMs: this.toolTimeoutMs });
    } catch (error) {
      return failed(errorMessage(error));
    } finally {
      clearTimeout(timer);
    }
  }

  /** A server tool refusing its arguments: the model gets the reason, the final response the refusal. */
  #refuse(outcome: ServerToolExecutionOutcome, call: LlmToolCall, reason: string, executionMs: number): void {
    const output = errorOutput(call, reason);
    outcome.outputs.push(output);
    outcome.executions.push({
      toolCallId: call.callId,
      name: call.name,
      argumentsJson: call.argumentsJson,
      errorMessage: output.output,
      executionMs,
    });
  }
}

const NOT_AN_OBJECT = "arguments must be a JSON object";
const NO_SUCH_TOOL = "no tool has this name";

/** The error output the model gets for a call it has to make again. */
function errorOutput(call: LlmToolCall, reason: string): FunctionCallOutputItem {
  return {
    type: "function_call_output",
    callId: call.callId,
    output: `Invalid arguments for ${call.name}: ${reason}`,
    isError: true,
  };
}

/** The tool names AGN-033 lets a ToolCall carry (the providers' function-name rule). */
const CLIENT_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

function parseArgumentsObject(argumentsJson: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(argumentsJson);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A call no server tool answers goes to the client (AGN-027 D) only when a client can be handed it (AGN-033 §5.1). */
function goesToClient(call: LlmToolCall, args: Record<string, unknown> | undefined): boolean {
  return args !== undefined && CLIENT_TOOL_NAME.test(call.name);
}
