/** One retrieved piece of code or text for the `[CONTEXT]` block (AGN-002). */
export interface RagChunk {
  id: string;
  path: string;
  startLine: number;
  endLine: number;
  language: string;
  content: string;
  /** Attributes `ragScope` conditions are matched against (e.g. repo, language, kind). */
  metadata?: Record<string, string>;
}
