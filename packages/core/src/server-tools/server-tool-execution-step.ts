import {
  DEFAULT_REQUEST_LIMITS,
  type FileRef,
  fail,
  type InvokeResult,
  ok,
  summarizeFieldErrors,
  type ToolResult,
} from "@aptix/contracts";
import { approvalCall, approvalOf, declinedOutput } from "../catalog/approval-tool.js";
import type { ServerToolRegistry } from "../catalog/server-tool-registry.js";
import { errorMessage } from "../error-message.js";
import type { Clock } from "../ports/clock.js";
import { QuotaExceededError } from "../ports/quota-exceeded-error.js";
import type { ServerTool, ServerToolContext } from "../ports/server-tool.js";
import { type ToolRunResult, type TurnObserver, unobserved } from "../ports/turn-observer.js";
import type { LlmToolCall } from "../records/llm-response.js";
import type { ToolDefinition } from "../records/tool-definition.js";
import type { FunctionCallOutputItem } from "../records/transcript-item.js";
import type { ServerToolExecution } from "../records/turn-record.js";
import { storable } from "../storable.js";
import { ArgumentsSchemas } from "./arguments-schemas.js";
import type { FileKeeper } from "./file-keeper.js";

/** `APTIX_TOOL_TIMEOUT_MS` when unset: the longest a server tool may run. */
const DEFAULT_TOOL_TIMEOUT_MS = 30_000;

export interface ServerToolExecutionStepOptions {
  registry: ServerToolRegistry;
  clock: Clock;
  files: FileKeeper;
  /** The longest one server tool may run before the turn fails with TOOL_FAILED. */
  toolTimeoutMs?: number;
  /** Watches each run of a server tool whose arguments passed their checks. */
  observer?: TurnObserver;
}

export interface ServerToolExecutionInput {
  calls: LlmToolCall[];
  /** The tools the LLM call that made `calls` offered (its request's `tools`): the only names a call may use. */
  offered: readonly ToolDefinition[];
  context: Omit<ServerToolContext, "files" | "signal">;
  /** The turn's: aborted when it is cancelled, which aborts the running tool and stops waiting for it. */
  signal?: AbortSignal;
}

export interface ServerToolExecutionOutcome {
  /** Outputs of the calls the server answered (tool results and refusals), in call order. */
  outputs: FunctionCallOutputItem[];
  /** The runs of server tools (argument refusals included), for the final response's `toolResults`. */
  executions: ServerToolExecution[];
  /** The calls left for the client, in call order (approvals in their calls' places). */
  clientCalls: LlmToolCall[];
  /** The calls of tools that ask first, awaiting the client's approval (docs/server-tools.md). */
  approvals: LlmToolCall[];
  /** The files the tools stored, in the order they were kept. */
  files: FileRef[];
  /** Successful executions' parsed results by call id, for the Reasoner to act on (mode changes). */
  results: Map<string, unknown>;
}

/**
 * Layer 3 — Server Tool Execution (AGN-027 D): runs server tools sequentially in call order. A call may name only
 * a tool its LLM call offered; its arguments must fit that tool's `parameters` schema. Any other call, and
 * arguments that are not a JSON object, that break the schema or that the tool refuses, go back to the model as an
 * error output so it can correct itself: nothing runs and nothing reaches a client. So does a tool's own
 * `errorMessage`; an executor that throws or outlives `toolTimeoutMs` fails the turn with TOOL_FAILED (502). An
 * offered tool the registry does not hold is a client tool.
 */
export class ServerToolExecutionStep {
  private readonly registry: ServerToolRegistry;
  private readonly clock: Clock;
  private readonly files: FileKeeper;
  private readonly toolTimeoutMs: number;
  private readonly observer: TurnObserver;
  private readonly schemas = new ArgumentsSchemas();

  constructor(options: ServerToolExecutionStepOptions) {
    ({ registry: this.registry, clock: this.clock, files: this.files } = options);
    this.toolTimeoutMs = options.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    this.observer = options.observer ?? unobserved;
  }

  /**
   * Whether `run` would run no server tool for `calls` and hand at least one to the client: the round ends
   * with them, and nothing runs before its settlement.
   */
  handsRoundToClient(calls: readonly LlmToolCall[], offered: readonly ToolDefinition[]): boolean {
    const routes = calls.map((call) => this.#route(call, offered));
    return (
      routes.every((route) => route.to !== "server") &&
      routes.some((route) => route.to === "client" || route.to === "approval")
    );
  }

  async run({
    calls,
    offered,
    context,
    signal,
  }: ServerToolExecutionInput): Promise<InvokeResult<ServerToolExecutionOutcome>> {
    const outcome = emptyOutcome();
    for (const call of calls) {
      const route = this.#route(call, offered);
      if (route.to === "client" || route.to === "approval") {
        // A client answers at most maxToolResults calls a round (the contracts refuse more): the rest go back to
        // the model, to call again once these have answered.
        if (outcome.clientCalls.length >= MAX_CLIENT_CALLS) {
          this.#refuse(outcome, call, tooManyClientCalls(call));
          continue;
        }
        outcome.clientCalls.push(route.call);
        // A server tool that asks first: the client gets its approval in its place (docs/server-tools.md).
        if (route.to === "approval") outcome.approvals.push(route.approved);
        continue;
      }
      if (route.to === "not_offered") {
        this.#refuse(outcome, call, `Tool "${call.name}" is not available in mode "${context.mode}".`);
        continue;
      }
      if (route.to === "refused") {
        // The server's own tool is listed as refused, having spent no time: its schema check came first.
        const timing = route.tool ? { startedAt: this.clock.now(), executionMs: 0 } : undefined;
        this.#refuse(outcome, call, invalidArguments(call, route.reason), timing);
        continue;
      }
      const ran = await this.#runServer(route.tool, route.args, call, { context, outcome, signal });
      if (!ran.successful) return ran;
    }
    return ok(outcome);
  }

  /**
   * Answers the calls of tools that ask first (`approvals`, as `run` put them aside) with the client's results of
   * their `aptix_approve` calls: an approved one runs now, as `run` runs a server tool; any other is declined,
   * the model told so. The user's answer and `decidedBy` are kept with each run.
   */
  async runApproved({
    approvals,
    results,
    decidedBy,
    context,
    signal,
  }: {
    approvals: readonly LlmToolCall[];
    results: readonly ToolResult[];
    decidedBy: string;
    context: ServerToolExecutionInput["context"];
    signal?: AbortSignal;
  }): Promise<InvokeResult<ServerToolExecutionOutcome>> {
    const outcome = emptyOutcome();
    for (const call of approvals) {
      const answer = approvalOf(results.find((result) => result.toolCallId === call.callId));
      const tool = this.registry.get(call.name);
      if (!answer.approved || tool === undefined) {
        const output = declinedOutput(call.name, answer.message);
        outcome.outputs.push({ type: "function_call_output", callId: call.callId, output, isError: true });
        outcome.executions.push({
          toolCallId: call.callId,
          name: call.name,
          argumentsJson: call.argumentsJson,
          approval: { approved: false, decidedBy },
          errorMessage: output,
          startedAt: this.clock.now(),
          executionMs: 0,
        });
        continue;
      }
      const args = parseArgumentsObject(call.argumentsJson) ?? {};
      const ran = await this.#runServer(tool, args, call, {
        context,
        outcome,
        signal,
        approval: { approved: true, decidedBy },
      });
      if (!ran.successful) return ran;
    }
    return ok(outcome);
  }

  /** One server tool's run of `call`: its own check of the arguments, then the tool, bounded in time. */
  async #runServer(
    tool: ServerTool,
    args: Record<string, unknown>,
    call: LlmToolCall,
    into: {
      context: ServerToolExecutionInput["context"];
      outcome: ServerToolExecutionOutcome;
      signal: AbortSignal | undefined;
      approval?: ServerToolExecution["approval"];
    },
  ): Promise<InvokeResult<void>> {
    const { outcome } = into;
    const startedAt = this.clock.now();
    const parsed = tool.parseArguments(args);
    if (!parsed.ok) {
      this.#refuse(outcome, call, invalidArguments(call, parsed.message), {
        startedAt,
        executionMs: this.clock.now().getTime() - startedAt.getTime(),
      });
      return ok(undefined);
    }
    const ran = await this.observer.toolRun({ name: call.name, callId: call.callId }, () =>
      this.#execute(tool, parsed.value, call, into.context, outcome.files, into.signal),
    );
    if (!ran.successful) return ran;
    const base = {
      toolCallId: call.callId,
      name: call.name,
      argumentsJson: call.argumentsJson,
      ...(into.approval ? { approval: into.approval } : {}),
      startedAt,
      executionMs: this.clock.now().getTime() - startedAt.getTime(),
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
      return ok(undefined);
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
    return ok(undefined);
  }

  /** Where a call goes: the one place that decides what may run or reach a client (docs/security.md). */
  #route(call: LlmToolCall, offered: readonly ToolDefinition[]): Route {
    const check = this.schemas.of(offered).get(call.name);
    if (check === undefined) return { to: "not_offered" };
    const tool = this.registry.get(call.name);
    const args = parseArgumentsObject(call.argumentsJson);
    // Neither the server nor a client can run a call whose arguments are not a JSON object: the model must retry.
    if (args === undefined) return { to: "refused", tool, reason: NOT_AN_OBJECT };
    const read = check(args);
    if (read.problems.length > 0)
      return { to: "refused", tool, reason: summarizeFieldErrors("arguments", read.problems) };
    if (tool?.approval === "always") {
      const argumentsJson = read.args === args ? call.argumentsJson : JSON.stringify(read.args);
      return {
        to: "approval",
        call: approvalCall(call, tool, argumentsJson),
        approved: { ...call, argumentsJson },
      };
    }
    if (tool) return { to: "server", tool, args: read.args };
    // The client gets the arguments as read, so it sees every property its schema requires.
    return {
      to: "client",
      call: read.args === args ? call : { ...call, argumentsJson: JSON.stringify(read.args) },
    };
  }

  /** One run, bounded by `toolTimeoutMs`: the tool's signal is aborted when the turn stops waiting for it. */
  async #execute(
    tool: ServerTool,
    args: unknown,
    call: LlmToolCall,
    turn: ServerToolExecutionInput["context"],
    kept: FileRef[],
    cancel: AbortSignal | undefined,
  ): Promise<ToolRunResult> {
    const abort = new AbortController();
    const cancelled = () => abort.abort(cancel?.reason);
    cancel?.addEventListener("abort", cancelled, { once: true });
    const context: ServerToolContext = {
      ...turn,
      signal: abort.signal,
      files: {
        maxBytes: this.files.maxBytes,
        keep: async (file) => {
          const stored = await this.files.keep(turn, file);
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
    // A tool that does not heed its signal is not waited for once the turn is cancelled.
    const stopped = new Promise<"cancelled">((resolve) => {
      if (abort.signal.aborted) resolve("cancelled");
      abort.signal.addEventListener("abort", () => resolve("cancelled"), { once: true });
    });
    try {
      const answered = await Promise.race([tool.execute(args, context), timedOut, stopped]);
      if (answered === "cancelled") return failed("the turn was cancelled");
      if (answered !== "timeout") {
        // What a tool answers (an MCP server's text) is data like a model's: made storable before it is kept.
        if ("errorMessage" in answered) return ok({ errorMessage: storable(answered.errorMessage) });
        const result = storable(answered.result);
        // A result that is not JSON (a bigint, a cycle) is the tool's bug, not the model's.
        return ok({ result, resultJson: JSON.stringify(result ?? null) });
      }
      abort.abort(new Error(`ran longer than ${this.toolTimeoutMs} ms`));
      return failed(`it ran longer than ${this.toolTimeoutMs} ms`, { timeoutMs: this.toolTimeoutMs });
    } catch (error) {
      // A quota is the principal's, not the tool's fault: the model hears of it and the turn goes on.
      if (error instanceof QuotaExceededError) return ok({ errorMessage: error.message });
      return failed(storable(errorMessage(error)));
    } finally {
      cancel?.removeEventListener("abort", cancelled);
      clearTimeout(timer);
    }
  }

  /**
   * A call answered with an error output, nothing run. Only a server tool's refusal is listed among the
   * executions (with `timing`, when its own check started and the time it took): any other call was never the
   * server's.
   */
  #refuse(
    outcome: ServerToolExecutionOutcome,
    call: LlmToolCall,
    output: string,
    timing?: Pick<ServerToolExecution, "startedAt" | "executionMs">,
  ): void {
    outcome.outputs.push({ type: "function_call_output", callId: call.callId, output, isError: true });
    if (timing === undefined) return;
    outcome.executions.push({
      toolCallId: call.callId,
      name: call.name,
      argumentsJson: call.argumentsJson,
      errorMessage: output,
      ...timing,
    });
  }
}

/**
 * `not_offered`: a name the LLM call did not offer; `refused`: an offered tool's arguments, sent back to the model
 * before anything ran (`tool` when it is the server's); `server` and `client`: who runs it.
 */
type Route =
  | { to: "not_offered" }
  | { to: "refused"; tool: ServerTool | undefined; reason: string }
  | { to: "server"; tool: ServerTool; args: Record<string, unknown> }
  | { to: "client"; call: LlmToolCall }
  /** A server tool that asks first: `call` (`aptix_approve`) goes to the client, `approved` runs once approved. */
  | { to: "approval"; call: LlmToolCall; approved: LlmToolCall };

/** The most tool calls one round hands a client: as many results as a tool continuation may carry. */
const MAX_CLIENT_CALLS = DEFAULT_REQUEST_LIMITS.maxToolResults;

const tooManyClientCalls = (call: LlmToolCall) =>
  `Too many tool calls in one response: the client runs at most ${MAX_CLIENT_CALLS} at once. Call ${call.name} again once these have answered.`;

const NOT_AN_OBJECT = "arguments must be a JSON object";

/** The error output's text for arguments the model has to send again. */
function invalidArguments(call: LlmToolCall, reason: string): string {
  return `Invalid arguments for ${call.name}: ${reason}`;
}

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

function emptyOutcome(): ServerToolExecutionOutcome {
  return { outputs: [], executions: [], clientCalls: [], approvals: [], files: [], results: new Map() };
}
