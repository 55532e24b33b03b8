import type { DocumentChunk } from "./document-chunk.js";
import { languageOf } from "./language-of.js";
import { chunkSizer, sourceLines } from "./source-lines.js";
import { structuralBlocks } from "./structural-blocks.js";

export interface ChunkDocumentInput {
  /** The document's path; its extension names the language when `language` does not. */
  path: string;
  contents: string;
  /** The language the request names, if any (see `languageOf`). */
  language?: string;
  /** The most lines a chunk holds (default 60). */
  maxLines?: number;
  /** The most characters a chunk's `text` holds (default 2,400); only a single longer line exceeds it. */
  maxChars?: number;
  /** Lines repeated between the pieces of a block that had to be cut hard (default 2, below `maxLines`). */
  overlapLines?: number;
}

/** A run of lines (0-based, inclusive); `cut` when it is a piece of a block too long for one chunk. */
interface LineRange {
  start: number;
  end: number;
  nonBlank: number;
  cut: boolean;
}

interface Bounds {
  maxLines: number;
  maxChars: number;
  overlapLines: number;
  /** The length of `lines[from..to]` joined with `\n`. */
  sizeOf: (from: number, to: number) => number;
}

// A chunk needs this many non-blank lines before a new section may end it, so chunks are not one-liners.
const MIN_SECTION_LINES = 3;

function integerOption(name: string, value: number, minimum: number): number {
  if (!Number.isInteger(value) || value < minimum) {
    throw new RangeError(`${name} must be an integer of at least ${minimum}, got ${value}`);
  }
  return value;
}

/**
 * Cuts the chunks of a document along its structure: blank lines end blocks, and a top-level declaration
 * (with the decorators, attributes and comments right above it) or a Markdown heading starts a new chunk once
 * the chunk before it has `MIN_SECTION_LINES` non-blank lines. Smaller neighbours are merged up to the bounds;
 * a block without blank lines that exceeds them is cut hard, its pieces overlapping by `overlapLines`. Chunks
 * never start or end on a blank line and never cut a line, so a single line longer than `maxChars` is a chunk
 * of its own. Pure: no I/O. Throws a `RangeError` for bounds it cannot honour.
 */
export function chunkDocument(input: ChunkDocumentInput): DocumentChunk[] {
  const maxLines = integerOption("maxLines", input.maxLines ?? 60, 1);
  const maxChars = integerOption("maxChars", input.maxChars ?? 2400, 1);
  const overlapLines = integerOption("overlapLines", input.overlapLines ?? Math.min(2, maxLines - 1), 0);
  if (overlapLines >= maxLines) {
    throw new RangeError(`overlapLines must be below maxLines (${maxLines}), got ${overlapLines}`);
  }
  const language = languageOf(input.path, input.language);
  const lines = sourceLines(input.contents);
  const bounds: Bounds = { maxLines, maxChars, overlapLines, sizeOf: chunkSizer(lines) };

  return mergeSmall(packBlocks(lines, language, bounds), bounds).map(({ start, end }) => ({
    startLine: start + 1,
    endLine: end + 1,
    text: lines.slice(start, end + 1).join("\n"),
    language,
  }));
}

function fits(bounds: Bounds, start: number, end: number): boolean {
  return end - start < bounds.maxLines && bounds.sizeOf(start, end) <= bounds.maxChars;
}

/** Packs the document's blocks into chunks in order, cutting a block that fits no chunk. */
function packBlocks(lines: readonly string[], language: string, bounds: Bounds): LineRange[] {
  const ranges: LineRange[] = [];
  let open: LineRange | undefined;
  for (const block of structuralBlocks(lines, language)) {
    const size = block.end - block.start + 1;
    const sectionEnds = block.opensSection && open !== undefined && open.nonBlank >= MIN_SECTION_LINES;
    if (open && !sectionEnds && fits(bounds, open.start, block.end)) {
      open.end = block.end;
      open.nonBlank += size;
      continue;
    }
    if (open) ranges.push(open);
    open = undefined;
    if (fits(bounds, block.start, block.end))
      open = { start: block.start, end: block.end, nonBlank: size, cut: false };
    else ranges.push(...cutHard(block.start, block.end, bounds));
  }
  if (open) ranges.push(open);
  return ranges;
}

/** Folds a chunk too small to stand alone into the one before it, when both fit. */
function mergeSmall(ranges: readonly LineRange[], bounds: Bounds): LineRange[] {
  const merged: LineRange[] = [];
  for (const range of ranges) {
    const previous = merged.at(-1);
    const small = !range.cut && range.nonBlank < MIN_SECTION_LINES;
    if (previous && small && !previous.cut && fits(bounds, previous.start, range.end)) {
      previous.end = range.end;
      previous.nonBlank += range.nonBlank;
    } else {
      merged.push({ ...range });
    }
  }
  return merged;
}

/** Pieces of a block of non-blank lines that fits no chunk: as many lines as fit, each repeating the last few. */
function cutHard(first: number, last: number, bounds: Bounds): LineRange[] {
  const pieces: LineRange[] = [];
  let start = first;
  for (;;) {
    let end = start;
    while (end < last && fits(bounds, start, end + 1)) end++;
    pieces.push({ start, end, nonBlank: end - start + 1, cut: true });
    if (end >= last) return pieces;
    // The overlap shrinks when the next piece could not otherwise take a new line.
    let next = Math.max(end + 1 - bounds.overlapLines, start + 1);
    while (next <= end && !fits(bounds, next, end + 1)) next++;
    start = next;
  }
}
