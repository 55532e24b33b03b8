import type { WorkspaceDocument } from "@aptix/contracts";
import type { ChunkDocumentInput } from "../retrieval/chunk-document.js";

/** The chunker's bounds (see `chunkDocument`); its defaults where absent. */
export type ChunkingBounds = Pick<ChunkDocumentInput, "maxLines" | "maxChars" | "overlapLines">;

export interface PrepareDocumentInput {
  document: WorkspaceDocument;
  /** The content hash the index holds for the document's path, if any: a document that still has it is not cut. */
  storedHash?: string;
  chunking?: ChunkingBounds;
}

/** A chunk as cut, with its code-aware terms (`codeSearchText`); the caller mints its id. */
export interface PreparedChunk {
  startLine: number;
  endLine: number;
  text: string;
  searchText: string;
}

export interface PreparedDocument {
  language: string;
  /** Of the contents and the attributes a chunk keeps (language, repo, tags, metadata). */
  contentHash: string;
  /** Absent when `contentHash` equals the `storedHash` given: the document is unchanged and was not cut. */
  chunks?: PreparedChunk[];
}

/**
 * Hashes a pushed document and cuts it into chunks with their terms when it changed: the CPU-heavy part of a
 * push (docs/knowledge.md), which the server runs in worker threads so that its event loop stays free. Input
 * and answer are plain data, so they cross a thread boundary as they are.
 */
export interface DocumentPreparation {
  prepare(input: PrepareDocumentInput): Promise<PreparedDocument>;
}
