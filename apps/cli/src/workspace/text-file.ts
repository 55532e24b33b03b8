import { constants, open } from "node:fs/promises";

/** What a file holds, as far as the tools and the index are concerned. */
export type TextFile =
  | { kind: "text"; text: string; bytes: number }
  | { kind: "binary"; bytes: number }
  | { kind: "too_large"; bytes: number };

const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads a file as UTF-8 text unless it is larger than `maxBytes` (then it is not read at all) or binary: a NUL
 * byte, or bytes that are not UTF-8, as git's own heuristic does. `flags` are added to the open's (`O_NOFOLLOW`).
 */
export async function readTextFile(path: string, maxBytes: number, flags = 0): Promise<TextFile> {
  const handle = await open(path, constants.O_RDONLY | flags);
  try {
    const { size } = await handle.stat();
    if (size > maxBytes) return { kind: "too_large", bytes: size };
    const content = await handle.readFile();
    if (content.includes(0)) return { kind: "binary", bytes: size };
    try {
      return { kind: "text", text: decoder.decode(content), bytes: size };
    } catch {
      return { kind: "binary", bytes: size };
    }
  } finally {
    await handle.close();
  }
}
