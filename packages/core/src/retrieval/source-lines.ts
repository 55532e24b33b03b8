/**
 * A document's lines as an editor numbers them: `\r\n`, `\r` and `\n` each end a line, and a final line break
 * does not open an empty last line (a document without one keeps its last line as is).
 */
export function sourceLines(contents: string): string[] {
  if (contents === "") return [];
  const lines = contents.split(/\r\n|\r|\n/);
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

export function isBlank(line: string): boolean {
  return line.trim() === "";
}

/**
 * Measures runs of `lines`: the length of `lines[from..to]` joined with `\n`, the size of the chunk they would
 * make. Prefix sums keep each measure constant-time, so packing a long document stays linear.
 */
export function chunkSizer(lines: readonly string[]): (from: number, to: number) => number {
  const offsets = [0];
  for (const line of lines) offsets.push((offsets.at(-1) ?? 0) + line.length + 1);
  return (from, to) => (offsets[to + 1] ?? 0) - (offsets[from] ?? 0) - 1;
}
