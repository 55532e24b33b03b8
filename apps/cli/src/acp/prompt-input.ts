import { basename, isAbsolute, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { type ContentBlock, RequestError } from "@agentclientprotocol/sdk";
import type { ClipboardImage, InputArtifact, UserTurnRequest } from "@aptix/contracts";

/** What a prompt's content blocks become in a user turn. */
export type PromptInput = Pick<UserTurnRequest, "instruction" | "inputArtifacts" | "clipboardImages">;

/**
 * A prompt's content blocks as a user turn: text blocks make the instruction, embedded resources (a file the
 * editor attached, with its text or bytes) become `inputArtifacts`, images become clipboard images, and resource
 * links are named at the end of the instruction (by workspace path when inside it, so the model can `read_file`
 * them). Audio is refused: `initialize` does not offer it. The service checks every limit and names the field.
 */
export function promptInput(blocks: readonly ContentBlock[], editorRoot: string): PromptInput {
  const texts: string[] = [];
  const links: string[] = [];
  const inputArtifacts: InputArtifact[] = [];
  const clipboardImages: ClipboardImage[] = [];
  for (const [index, block] of blocks.entries()) {
    switch (block.type) {
      case "text":
        texts.push(block.text);
        break;
      case "image":
        clipboardImages.push({
          id: `image-${index + 1}`,
          mimeType: block.mimeType as ClipboardImage["mimeType"],
          dataBase64: block.data,
        });
        break;
      case "resource": {
        const { resource } = block;
        const relativePath = workspacePathOf(resource.uri, editorRoot);
        const text = "text" in resource ? resource.text : undefined;
        inputArtifacts.push({
          relativePath,
          fileName: basename(relativePath),
          contents: text ?? ("blob" in resource ? resource.blob : ""),
          origin: "ide",
          ...(text === undefined ? { encoding: "base64" as const } : {}),
          ...(resource.mimeType ? { mimeType: resource.mimeType } : {}),
        });
        break;
      }
      case "resource_link":
        links.push(`- ${workspacePathOf(block.uri, editorRoot)}${block.name ? ` (${block.name})` : ""}`);
        break;
      default:
        throw RequestError.invalidParams(
          { path: `prompt[${index}]` },
          `prompt[${index}] is ${block.type} content, which aptix acp does not take (text, images, resources and links).`,
        );
    }
  }
  if (links.length > 0) texts.push(`Files referenced:\n${links.join("\n")}`);
  const instruction = texts.join("\n\n");
  return {
    ...(instruction.trim() === "" ? {} : { instruction }),
    ...(inputArtifacts.length > 0 ? { inputArtifacts } : {}),
    ...(clipboardImages.length > 0 ? { clipboardImages } : {}),
  };
}

/** A resource's path relative to the workspace when its `file:` URI lies inside it; else its last segment. */
function workspacePathOf(uri: string, editorRoot: string): string {
  let path: string;
  try {
    path = fileURLToPath(uri);
  } catch {
    // Not a file URI (`zed://…`, `https://…`): named by its last segment.
    return (URL.canParse(uri) && basename(new URL(uri).pathname)) || "resource";
  }
  const inside = relative(editorRoot, path);
  if (inside !== "" && !inside.startsWith("..") && !isAbsolute(inside)) return inside.split(sep).join("/");
  return basename(path) || "resource";
}
