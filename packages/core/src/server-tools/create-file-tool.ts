import type { ArgumentsCheck, ServerTool } from "../ports/server-tool.js";
import { isMediaType, MAX_MEDIA_TYPE_LENGTH } from "./media-type.js";

/** The built-in `create_file` (docs/server-tools.md): the model hands over a file and gets back its FileRef. */
const CREATE_FILE_TOOL_NAME = "create_file";

export interface CreateFileArguments {
  name: string;
  mimeType: string;
  content: string;
  encoding: "utf8" | "base64";
  description?: string;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Stores the model's file through the turn's file keeper (AGN-033 §6): the turn's final response lists it in
 * `files[]`, and the model gets its FileRef to mention. A file over `files.maxBytes` is refused back to the model.
 */
export function createCreateFileTool(name: string = CREATE_FILE_TOOL_NAME): ServerTool<CreateFileArguments> {
  return {
    definition: {
      name,
      description:
        "Create a file for the user to download, such as a report, a patch or an image. Give its content as " +
        "UTF-8 text, or base64 for binary content. Answers the file's reference (name, url, size, hash); " +
        "mention the file by name in your answer rather than repeating its content.",
      parameters: {
        type: "object",
        properties: {
          name: { type: "string", description: "The file's name, with its extension, e.g. report.md." },
          mimeType: { type: "string", description: "The content's media type, e.g. text/markdown." },
          content: { type: "string", description: "The content, encoded as `encoding` says." },
          encoding: {
            type: ["string", "null"],
            enum: ["utf8", "base64", null],
            description: "utf8 (the default) or base64.",
          },
          description: { type: ["string", "null"], description: "One sentence on what the file holds." },
        },
        required: ["name", "mimeType", "content", "encoding", "description"],
        additionalProperties: false,
      },
      strict: true,
    },
    parseArguments: parseCreateFileArguments,
    async execute(args, context) {
      const content =
        args.encoding === "base64" ? fromBase64(args.content) : new TextEncoder().encode(args.content);
      if (content.byteLength > context.files.maxBytes) {
        return {
          errorMessage: `The file is ${content.byteLength} bytes; files may have at most ${context.files.maxBytes} bytes.`,
        };
      }
      const { ref } = await context.files.keep({
        name: args.name,
        mimeType: args.mimeType,
        content,
        ...(args.description === undefined ? {} : { description: args.description }),
      });
      return { result: ref };
    },
  };
}

/** The model's arguments checked field by field; a refusal names the field and what it must be. */
function parseCreateFileArguments(args: unknown): ArgumentsCheck<CreateFileArguments> {
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return { ok: false, message: "arguments must be an object with name, mimeType and content" };
  }
  const { name, mimeType, content, encoding, description } = args as Record<string, unknown>;
  if (typeof name !== "string" || !isFileName(name)) {
    return {
      ok: false,
      message: "name must be a file name (1–255 characters, no '/', '\\' or control characters)",
    };
  }
  if (typeof mimeType !== "string" || !isMediaType(mimeType)) {
    return {
      ok: false,
      message:
        "mimeType must be an ASCII media type such as text/plain or text/plain; charset=utf-8 " +
        `(type/subtype, then optional ; name=value parameters; at most ${MAX_MEDIA_TYPE_LENGTH} characters)`,
    };
  }
  if (typeof content !== "string") return { ok: false, message: "content must be a string" };
  if (encoding !== undefined && encoding !== null && encoding !== "utf8" && encoding !== "base64") {
    return { ok: false, message: 'encoding must be "utf8" or "base64"' };
  }
  if (encoding === "base64" && !BASE64.test(content)) {
    return { ok: false, message: "content must be base64 (A–Z, a–z, 0–9, '+', '/', padded with '=')" };
  }
  if (description !== undefined && description !== null && typeof description !== "string") {
    return { ok: false, message: "description must be a string" };
  }
  return {
    ok: true,
    value: {
      name,
      mimeType,
      content,
      encoding: encoding ?? "utf8",
      ...(typeof description === "string" && description !== "" ? { description } : {}),
    },
  };
}

/** Core stays free of Node's Buffer: `atob` is a web API Node has too. */
function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

/** A file name, not a path: 1–255 characters, no separators or control characters, not `.` or `..`. */
function isFileName(name: string): boolean {
  if (name.length === 0 || name.length > 255 || name === "." || name === "..") return false;
  return ![...name].some(
    (char) => char === "/" || char === "\\" || char.charCodeAt(0) < 32 || char === "\u007f",
  );
}
