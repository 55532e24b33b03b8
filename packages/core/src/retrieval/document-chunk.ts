/**
 * One piece of a document, ready to index. `startLine` and `endLine` are 1-based and inclusive, as an editor
 * shows them, and `text` is exactly those lines joined with `\n` (line breaks normalized, nothing trimmed).
 */
export interface DocumentChunk {
  startLine: number;
  endLine: number;
  text: string;
  language: string;
}
