import type { UserTurnRequest } from "@aptix/contracts";
import type { RagChunk } from "../../model/rag-chunk.js";
import type { ContentPart, UserMessageItem } from "../../model/transcript-item.js";
import { fenceFor, formatRagContextBlock } from "./rag-context-block.js";

export interface UserMessageInput {
  modeId: string;
  request: UserTurnRequest;
  chunks: readonly RagChunk[];
  /** The session's latched solution context after this request's value was applied. */
  solutionContextText: string | null;
}

/**
 * The user message of a turn (AGN-003 §3): `[MODE]` + `[INSTRUCTION]` first, the `[CONTEXT]` block second
 * (when there are chunks), then the latched solution context, the input artifacts and the clipboard images.
 */
export function composeUserMessage({
  modeId,
  request,
  chunks,
  solutionContextText,
}: UserMessageInput): UserMessageItem {
  const content: ContentPart[] = [
    { type: "text", text: `[MODE: ${modeId}]\n\n[INSTRUCTION]\n${request.instruction ?? ""}` },
  ];
  const contextBlock = formatRagContextBlock(chunks);
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
