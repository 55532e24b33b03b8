import type { LlmCallResult } from "../ports/llm-provider.js";
import type { LlmResponse } from "../records/llm-response.js";
import { storable } from "../storable.js";

/** An escape, in JSON text, of U+0000 or of either half of a surrogate pair (which may stand alone). */
const UNSTORABLE_ESCAPE = /\\u(?:0000|d[89a-f][0-9a-f]{2})/i;

/**
 * `result` made storable (`storable`), tool-call arguments included: they are JSON text, which may write a NUL or
 * a lone surrogate as an escape (`\u0000`) that a client, or the service, parsing them would get back. Arguments
 * holding such an escape are parsed, made storable and written again; arguments that are not JSON are left as
 * `storable` made them (no character there is unstorable).
 */
export function storableResult(result: LlmCallResult): LlmCallResult {
  const kept = storable(result);
  if (!kept.successful) return kept;
  const { toolCalls, output } = kept.result;
  if (!toolCalls.some((call) => UNSTORABLE_ESCAPE.test(call.argumentsJson))) return kept;
  const response: LlmResponse = {
    ...kept.result,
    toolCalls: toolCalls.map((call) => ({ ...call, argumentsJson: storableJson(call.argumentsJson) })),
    output: output.map((item) =>
      item.type === "function_call" ? { ...item, argumentsJson: storableJson(item.argumentsJson) } : item,
    ),
  };
  return { ...kept, result: response };
}

function storableJson(json: string): string {
  if (!UNSTORABLE_ESCAPE.test(json)) return json;
  try {
    return JSON.stringify(storable(JSON.parse(json)));
  } catch {
    return json;
  }
}
