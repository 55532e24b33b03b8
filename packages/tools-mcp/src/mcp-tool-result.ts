import type { ServerToolFiles, ServerToolResult } from "@aptix/core";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** What the model learns of a file an MCP tool produced: enough to name it and hand its url on. */
export interface McpFileMention {
  fileId: string;
  name: string;
  mimeType: string;
  url: string;
}

/**
 * An MCP `CallToolResult` as a server tool result (docs/server-tools.md): text content becomes the output; embedded
 * resources, images and audio become files, kept through `files` (the resource's mimeType, its URI's last
 * segment as name) and mentioned in the output as `{ text, files: [{ fileId, name, mimeType, url }] }`.
 * `isError` becomes the call's error output. Content over `files.maxBytes` is not kept: the output says so.
 */
export async function mcpToolResult(
  result: CallToolResult,
  files: ServerToolFiles,
): Promise<ServerToolResult> {
  const texts: string[] = [];
  const mentions: McpFileMention[] = [];
  let unnamed = 0;
  for (const block of result.content) {
    if (block.type === "text") {
      texts.push(block.text);
      continue;
    }
    if (block.type === "resource_link") {
      texts.push(`Resource ${block.name}: ${block.uri}`);
      continue;
    }
    const file =
      block.type === "resource"
        ? {
            name: lastSegment(block.resource.uri) ?? `resource-${++unnamed}`,
            mimeType:
              block.resource.mimeType ??
              ("text" in block.resource ? "text/plain" : "application/octet-stream"),
            content:
              "text" in block.resource
                ? new TextEncoder().encode(block.resource.text)
                : Buffer.from(block.resource.blob, "base64"),
          }
        : {
            name: `${block.type}-${++unnamed}${extensionOf(block.mimeType)}`,
            mimeType: block.mimeType,
            content: Buffer.from(block.data, "base64"),
          };
    if (file.content.byteLength > files.maxBytes) {
      texts.push(
        `[${file.name}: ${file.content.byteLength} bytes, over the ${files.maxBytes}-byte file limit; not kept]`,
      );
      continue;
    }
    const kept = await files.keep({ ...file, content: new Uint8Array(file.content) });
    mentions.push({
      fileId: kept.fileId,
      name: kept.ref.name,
      mimeType: kept.ref.mimeType,
      url: kept.ref.url,
    });
  }
  const text = texts.join("\n");
  if (result.isError)
    return { errorMessage: text === "" ? "The tool reported an error without a message." : text };
  if (mentions.length > 0) return { result: { text, files: mentions } };
  if (text === "" && result.structuredContent !== undefined) return { result: result.structuredContent };
  return { result: text };
}

/** `file:///repo/src/a.ts` → `a.ts`; undefined when the URI ends without a name. */
function lastSegment(uri: string): string | undefined {
  const path = uri.replace(/[?#].*$/, "");
  const segment = path.slice(path.lastIndexOf("/") + 1);
  if (segment === "" || segment.includes(":")) return undefined;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** `image/png` → `.png`; nothing for subtypes that are no file extension. */
function extensionOf(mimeType: string): string {
  const subtype = mimeType.split("/")[1]?.split(/[;+]/)[0]?.trim().toLowerCase() ?? "";
  return /^[a-z0-9]{1,8}$/.test(subtype) ? `.${subtype}` : "";
}
