import { DEFAULT_REQUEST_LIMITS, type ToolCall, type ToolResult } from "@aptix/contracts";
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
 * that are not a JSON object, a value JSON cannot hold and a value longer than the service accepts all become
 * `errorMessage`.
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
      outcome = { resultJson: withinLimit(await runOne(call, options)) };
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

/** The most characters of a result or error message the service accepts (`maxToolResultChars`). */
const MAX_CHARS = DEFAULT_REQUEST_LIMITS.maxToolResultChars;

/** Characters (code points) of `text`: its UTF-16 units less the second halves of its surrogate pairs. */
function charactersOf(text: string): number {
  let count = text.length;
  for (let i = 1; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xdc00 && code <= 0xdfff) count--;
  }
  return count;
}

/** A result the service would refuse, which would fail the whole continuation, goes back as an error instead. */
function withinLimit(json: string): string {
  if (json.length <= MAX_CHARS || charactersOf(json) <= MAX_CHARS) return json;
  throw new Error(
    `The tool's result is longer than the ${MAX_CHARS} characters the service accepts: ask for less, such as a range of lines.`,
  );
}

function errorMessageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (message.trim() === "") return "The tool failed.";
  if (message.length <= MAX_CHARS) return message;
  // Cut by UTF-16 units, so within the characters; never between the halves of a pair.
  const cut = message.slice(0, MAX_CHARS - 1);
  const last = cut.charCodeAt(cut.length - 1);
  return `${last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut}…`;
}
