import type { UserTurnRequest } from "@aptix/contracts";
import type { Mode } from "../catalog/mode.js";
import { type ConversationCursor, isFreshCursor } from "../records/conversation-cursor.js";
import type { ContentPart, UserMessageItem } from "../records/transcript-item.js";
import { fenceFor } from "../retrieval/rag-context-block.js";

export interface UserMessageInput {
  modeId: string;
  /** The mode's instructions, when the turn must tell the model about its mode (see `modeInstructionsToTell`). */
  modeInstructions?: string;
  request: UserTurnRequest;
  /** The turn's `[CONTEXT]` block (`formatRagContextBlock`), when it has one. */
  contextBlock?: string;
  /** The session's latched solution context after this request's value was applied. */
  solutionContextText: string | null;
}

/**
 * The user message of a turn (AGN-003 §3): `[MODE]` (+ `[MODE INSTRUCTIONS]` when given) + `[INSTRUCTION]`
 * first, the `[CONTEXT]` block second (when the turn has one), then the latched solution context, the input
 * artifacts and the clipboard images.
 */
export function composeUserMessage({
  modeId,
  modeInstructions,
  request,
  contextBlock,
  solutionContextText,
}: UserMessageInput): UserMessageItem {
  const told = modeInstructions ? `[MODE INSTRUCTIONS]\n${modeInstructions}\n\n` : "";
  const content: ContentPart[] = [
    { type: "text", text: `[MODE: ${modeId}]\n\n${told}[INSTRUCTION]\n${request.instruction ?? ""}` },
  ];
  if (contextBlock !== undefined) content.push({ type: "text", text: contextBlock });
  if (solutionContextText) content.push({ type: "text", text: `[SOLUTION CONTEXT]\n${solutionContextText}` });

  for (const artifact of request.inputArtifacts ?? []) {
    if (artifact.encoding !== "base64") {
      const fence = fenceFor(artifact.contents);
      const language = artifact.language ?? "";
      content.push({
        type: "text",
        text: `[ARTIFACT]\nPath: ${artifact.relativePath}\nOrigin: ${artifact.origin}\n${fence}${language}\n${artifact.contents}\n${fence}`,
      });
    } else if (artifact.mimeType?.startsWith("image/")) {
      content.push({ type: "image", mimeType: artifact.mimeType, dataBase64: artifact.contents });
    } else {
      content.push({
        type: "file",
        fileName: artifact.fileName,
        mimeType: artifact.mimeType ?? "application/octet-stream",
        dataBase64: artifact.contents,
      });
    }
  }
  for (const image of request.clipboardImages ?? []) {
    content.push({ type: "image", mimeType: image.mimeType, dataBase64: image.dataBase64 });
  }
  return { type: "user_message", content };
}

/**
 * The instructions a user turn carries in its first part (docs/wire-mapping.md): its mode's, when the last
 * user turn the provider's view of the conversation holds was in another mode (after `agent_change_mode`, a
 * `MODE_RESET`, or a turn that changed mode and then failed or was abandoned). None on a fresh cursor: the
 * session's first turn has them in the system message.
 */
export function modeInstructionsToTell(
  cursor: ConversationCursor,
  mode: Pick<Mode, "id" | "instructions">,
): string | undefined {
  if (isFreshCursor(cursor) || cursor.mode === mode.id || mode.instructions === "") return undefined;
  return mode.instructions;
}
