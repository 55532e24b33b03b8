import { Styled, type Terminal } from "./terminal.js";

/**
 * The patch as a reader sees it in `git diff`: headers bold, hunk lines cyan, additions green, removals red; the
 * model's text made visible, so no line of it can hide another.
 */
export function patchPreview(terminal: Terminal, patch: string): Styled {
  const lines = patch
    .replace(/\n$/, "")
    .split("\n")
    .map((line) => {
      if (/^(---|\+\+\+|diff |index )/.test(line)) return terminal.style("bold", line);
      if (line.startsWith("@@")) return terminal.style("cyan", line);
      if (line.startsWith("+")) return terminal.style("green", line);
      if (line.startsWith("-")) return terminal.style("red", line);
      return terminal.compose`${line}`;
    });
  return new Styled(lines.map((line) => line.text).join("\n"));
}
