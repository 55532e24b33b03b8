import type { ToolCall, ToolResult } from "@aptix/contracts";
import type { ToolContext, ToolHandler } from "./tool-handler.js";

export interface RunToolCallsOptions {
  sessionId: string;
  turnId: string;
  tools: Readonly<Record<string, ToolHandler>>;
  signal: AbortSignal | undefined;
}

/**
 * One result per call, in the calls' order, each run after the previous one finished (a later call may depend
 * on an earlier one, such as a read after a patch). A handler that throws, a tool with no handler, arguments
 * that are not a JSON object and a value JSON cannot hold all become `errorMessage`.
 */
export async function runToolCalls(
  calls: readonly ToolCall[],
  options: RunToolCallsOptions,
): Promise<ToolResult[]> {
  const results: ToolResult[] = [];
  for (const call of calls) {
    options.signal?.throwIfAborted();
    const started = Date.now();
    let outcome: { resultJson: string } | { errorMessage: string };
    try {
      outcome = { resultJson: await runOne(call, options) };
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      outcome = { errorMessage: errorMessageOf(error) };
    }
    results.push({ toolCallId: call.toolCallId, executionMs: Math.max(0, Date.now() - started), ...outcome });
  }
  return results;
}

async function runOne(call: ToolCall, options: RunToolCallsOptions): Promise<string> {
  const handler = Object.hasOwn(options.tools, call.name) ? options.tools[call.name] : undefined;
  if (handler === undefined) throw new Error(`This client has no tool named ${call.name}.`);
  const args = JSON.parse(call.argumentsJson) as unknown;
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    throw new Error("The tool's arguments are not a JSON object.");
  }
  const context: ToolContext = {
    sessionId: options.sessionId,
    turnId: options.turnId,
    toolCallId: call.toolCallId,
    name: call.name,
    argumentsJson: call.argumentsJson,
    signal: options.signal,
  };
  const value = await handler(args as Record<string, unknown>, context);
  const json = JSON.stringify(value === undefined ? null : value) as string | undefined;
  // A function or a symbol has no JSON text.
  if (json === undefined) throw new Error("The tool's result cannot be written as JSON.");
  return json;
}

function errorMessageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.trim() === "" ? "The tool failed." : message;
}
