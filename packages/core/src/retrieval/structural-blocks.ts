import { isBlank } from "./source-lines.js";

/** A run of non-blank lines (0-based, inclusive); `opensSection` when it starts a declaration or a heading. */
export interface StructuralBlock {
  start: number;
  end: number;
  opensSection: boolean;
}

// Keywords that open a top-level declaration in the languages `languageOf` knows; prose and data formats have none.
const DECLARATION =
  /^(?:export|function|class|interface|type|const|let|enum|def|async\s+(?:def|function)|public|private|protected|internal|static|abstract|sealed|namespace|func|fn|pub|impl|struct|trait|module)\b/;
const WITHOUT_DECLARATIONS = new Set(["markdown", "json", "yaml", "text", "html", "css"]);
// Decorators, attributes and comments stay with the declaration they precede.
const LEAD = /^(?:@|\[|#|\/\/|\/\*|\*)/;
const HEADING = /^ {0,3}#{1,6}(?:\s|$)/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** A closing fence repeats the opening one's character, at least as long, with nothing after it. */
function closes(line: string, marker: string, fence: string): boolean {
  return marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker;
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/** Which lines open a section: top-level declarations (moved up over their leads), or Markdown headings. */
function sectionStarts(lines: readonly string[], language: string): Set<number> {
  const starts = new Set<number>();
  if (language === "markdown") {
    let fence: string | undefined;
    lines.forEach((line, index) => {
      const marker = FENCE.exec(line)?.[1];
      if (fence === undefined && marker) fence = marker;
      else if (fence !== undefined && marker && closes(line, marker, fence)) fence = undefined;
      else if (fence === undefined && HEADING.test(line)) {
        starts.add(index);
      }
    });
    return starts;
  }
  if (WITHOUT_DECLARATIONS.has(language)) return starts;
  // A loop, not Math.min(...): a document may have more lines than a call takes arguments.
  let outermost = Number.POSITIVE_INFINITY;
  for (const line of lines) if (!isBlank(line)) outermost = Math.min(outermost, indentOf(line));
  lines.forEach((line, index) => {
    if (indentOf(line) !== outermost || !DECLARATION.test(line.trimStart())) return;
    let start = index;
    while (start > 0) {
      const previous = lines[start - 1] ?? "";
      if (isBlank(previous) || indentOf(previous) < outermost || !LEAD.test(previous.trimStart())) break;
      start--;
    }
    starts.add(start);
  });
  return starts;
}

/** Cuts a document into runs of non-blank lines, also cut where a section starts. */
export function structuralBlocks(lines: readonly string[], language: string): StructuralBlock[] {
  const starts = sectionStarts(lines, language);
  const blocks: StructuralBlock[] = [];
  let current: StructuralBlock | undefined;
  lines.forEach((line, index) => {
    if (isBlank(line)) {
      current = undefined;
      return;
    }
    if (current === undefined || starts.has(index)) {
      current = { start: index, end: index, opensSection: starts.has(index) };
      blocks.push(current);
    } else {
      current.end = index;
    }
  });
  return blocks;
}
