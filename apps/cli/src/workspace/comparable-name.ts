/**
 * The code points HFS+ leaves out when it compares names, as git's `is_hfs_dotgit` lists them (utf8.c,
 * `next_hfs_char`): zero-width joiners, directional marks, embeddings and overrides, the deprecated format
 * controls and the BOM. `.g\u200cit` opens `.git` there.
 */
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/**
 * A file or folder name as the file systems a workspace may live on compare it, so that a rule about `.git` or
 * `.vscode` holds for every spelling that opens the same entry: the code points HFS+ ignores dropped; everything
 * from the first `:` on dropped (an NTFS stream: `.git::$INDEX_ALLOCATION` is the folder `.git`); the trailing
 * dots and spaces Windows drops, dropped; and in lower case (case-insensitive file systems: macOS's and
 * Windows' by default). Only for comparing: the name on disk stays what it is.
 */
export function comparableName(name: string): string {
  const [named = ""] = name.replace(HFS_IGNORED, "").split(":", 1);
  return named.replace(/[. ]+$/, "").toLowerCase();
}
