import type { ToolResult } from "@aptix/contracts";

/**
 * AGN-033 §3.3: the results must answer the pending client calls exactly, in count, ids and order.
 * Returns why they do not, or undefined when they match.
 */
export function toolResultsMismatch(
  expectedCallIds: readonly string[],
  results: readonly ToolResult[],
): string | undefined {
  const received = results.map((result) => result.toolCallId);
  if (received.length !== expectedCallIds.length) {
    return `expected ${expectedCallIds.length} tool result(s) for ${expectedCallIds.join(", ")}, received ${received.length}`;
  }
  for (let index = 0; index < received.length; index++) {
    if (received[index] !== expectedCallIds[index]) {
      const order =
        new Set(received).size === received.length && expectedCallIds.every((id) => received.includes(id));
      return order
        ? `tool results are out of order: expected ${expectedCallIds.join(", ")}, received ${received.join(", ")}`
        : `toolResults[${index}] answers ${JSON.stringify(received[index])}, expected ${JSON.stringify(expectedCallIds[index])}`;
    }
  }
  return undefined;
}
