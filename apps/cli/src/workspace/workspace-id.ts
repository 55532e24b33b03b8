import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { basename } from "node:path";

/** The length of the hash part; the name part is cut so that the id stays within the identifier rule's 128. */
const HASH_DIGITS = 8;

/**
 * The workspace's id: its directory's name (each character the identifier rule does not allow, `IdentifierSchema`:
 * letters, digits, `.`, `_`, `:`, `-`, made `-`), `-`, and the first 8 hex digits of the sha256 of its real path,
 * so two projects of the same name never share an index. A directory that does not exist is named by its path as
 * given (the command then refuses it).
 */
export function workspaceIdOf(directory: string): string {
  let real = directory;
  try {
    real = realpathSync(directory);
  } catch {
    // Refused later with its own message: it is not a directory.
  }
  const name = basename(real).replace(/[^A-Za-z0-9._:-]/g, "-") || "workspace";
  const hash = createHash("sha256").update(real).digest("hex").slice(0, HASH_DIGITS);
  return `${name.slice(0, 128 - HASH_DIGITS - 1)}-${hash}`;
}
