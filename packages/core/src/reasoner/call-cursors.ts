import type { ConversationCursor } from "../records/conversation-cursor.js";
import type { AnsweredCall } from "./next-step.js";

/** Where an answered call leaves the conversation: the provider holds its input and output. */
export function advancedCursor({ request, response, cursor, held }: AnsweredCall): ConversationCursor {
  return {
    responseId: response.responseId ?? null,
    pendingInput: [],
    transcriptLength: cursor.transcriptLength + request.input.length + response.output.length,
    ...held,
    ...compactionOf(cursor),
    chainTokens: { input: response.usage.inputTokens, output: response.usage.outputTokens },
  };
}

/**
 * Before a call that handed tools to the client, with that call's input still to send: an abandoned turn
 * restores it, so the provider never sees those calls without outputs.
 */
export function resumeCursor({ request, cursor, held }: AnsweredCall): ConversationCursor {
  return {
    // A continuation that was lost and replayed must not be named again: replay from there too.
    responseId: request.continuation.type === "previous_response" ? cursor.responseId : null,
    pendingInput: request.input,
    transcriptLength: cursor.transcriptLength,
    // That input is sent again, the turn's user message with it when this was the turn's first call.
    ...held,
    ...compactionOf(cursor),
    ...(cursor.chainTokens !== undefined ? { chainTokens: cursor.chainTokens } : {}),
  };
}

/** Where the latest compaction left the chain: carried by every cursor of that chain. */
function compactionOf(cursor: ConversationCursor): Pick<ConversationCursor, "replayFrom" | "compactedTo"> {
  return {
    ...(cursor.replayFrom !== undefined ? { replayFrom: cursor.replayFrom } : {}),
    ...(cursor.compactedTo !== undefined ? { compactedTo: cursor.compactedTo } : {}),
  };
}
