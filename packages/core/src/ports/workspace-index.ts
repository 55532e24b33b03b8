import type { RagScopeCondition } from "@aptix/contracts";

/** Workspaces are named by principal and client-chosen id, exactly as sessions are. */
export interface WorkspaceKey {
  principal: string;
  workspaceId: string;
}

/** One chunk of a document as core cut it (`chunkDocument`), with the code-aware terms it is found by. */
export interface IndexChunkInput {
  /** Minted by core; unique across the store. */
  chunkId: string;
  startLine: number;
  endLine: number;
  text: string;
  /** `codeSearchText(text)`: the words and identifier parts the lexical ranking matches against. */
  searchText: string;
}

/** A document to upsert: its chunks are only used when `contentHash` differs from the stored one. */
export interface IndexDocumentInput {
  path: string;
  contentHash: string;
  language: string;
  repo: string | null;
  tags: string[];
  metadata: Record<string, string>;
  /** The bytes of the pushed contents (UTF-8): what the document counts against `quotaBytes`. Default 0. */
  sizeBytes?: number;
  /**
   * Omitted: the caller read this hash as stored (`documentHashes`) and did not cut the document. Should the
   * stored hash differ by the time the upsert runs (another push came between), the index writes nothing for
   * the document and answers its path in `stalePaths`.
   */
  chunks?: IndexChunkInput[];
}

export interface UpsertDocumentsInput {
  key: WorkspaceKey;
  documents: IndexDocumentInput[];
  /** Also delete the workspace's documents whose path is not in `documents`. */
  replace: boolean;
  /**
   * The most bytes (`sizeBytes`) the principal's documents, in all its workspaces, may take after the call, each
   * of `documents` counted at its given size and those `replace` deletes not at all. Past it, nothing is written
   * and QuotaExceededError (APTIX_QUOTA_WORKSPACE_BYTES) is thrown; concurrent upserts of one principal judge
   * each other's documents. Absent: no quota.
   */
  quotaBytes?: number;
}

export interface UpsertDocumentsOutcome {
  /** Paths whose document was created or whose hash changed (their chunks were replaced). */
  upserted: number;
  /** Paths whose stored hash already matched: nothing was written for them. */
  unchanged: number;
  deleted: number;
  /** The workspace's chunk total after the call. */
  chunks: number;
  /** Ids of the chunks this call inserted (those of upserted documents), to embed. */
  insertedChunkIds: string[];
  /**
   * Paths of documents given without chunks whose stored hash no longer matched (or that were gone): nothing
   * was written for them, and they count neither as upserted nor as unchanged. The caller cuts them and
   * upserts them again.
   */
  stalePaths: string[];
}

export interface WorkspaceSummary extends WorkspaceKey {
  documents: number;
  chunks: number;
  updatedAt: Date;
}

/** A chunk as stored, with every attribute `ragScope` can test. */
export interface IndexedChunk {
  chunkId: string;
  path: string;
  startLine: number;
  endLine: number;
  language: string;
  repo: string | null;
  tags: string[];
  metadata: Record<string, string>;
  text: string;
  contentHash: string;
}

export interface ScoredChunk extends IndexedChunk {
  score: number;
}

export interface LexicalSearchInput {
  key: WorkspaceKey;
  /** `codeQueryTerms(query)`: lower-case words and identifier parts; any of them may match. */
  terms: string[];
  /** ANDed inside the query (docs/knowledge.md): `path`, `language`, `repo`, `tag`, else a metadata key. */
  scope: RagScopeCondition[];
  /** Chunks whose repo or language equals these rank higher; they never filter. */
  boost: { repo?: string; language?: string };
  limit: number;
}

export interface VectorSearchInput {
  key: WorkspaceKey;
  model: string;
  embedding: number[];
  scope: RagScopeCondition[];
  limit: number;
}

export interface ChunkEmbedding {
  chunkId: string;
  embedding: number[];
}

/**
 * The per-principal index of pushed workspace documents (docs/knowledge.md). Adapters rank and filter inside
 * the database; core chunks, hashes and fuses. Every method scopes by `key.principal`: another principal's
 * workspace is unknown.
 */
export interface WorkspaceIndex {
  /** Creates the workspace when missing; atomic: a failure writes nothing. */
  upsertDocuments(input: UpsertDocumentsInput): Promise<UpsertDocumentsOutcome>;
  /**
   * The stored content hash of each of `paths` the workspace holds (an unknown workspace holds none), so the
   * caller cuts only the documents that changed.
   */
  documentHashes(key: WorkspaceKey, paths: string[]): Promise<Map<string, string>>;
  /** Undefined when the workspace is unknown; else how many of `paths` were deleted. */
  deleteDocuments(key: WorkspaceKey, paths: string[]): Promise<number | undefined>;
  getWorkspace(key: WorkspaceKey): Promise<WorkspaceSummary | undefined>;
  /** False when the workspace was unknown. */
  deleteWorkspace(key: WorkspaceKey): Promise<boolean>;
  /** Best first; undefined when the workspace is unknown, empty when nothing matches. */
  searchLexical(input: LexicalSearchInput): Promise<ScoredChunk[] | undefined>;
  /** Best first by cosine similarity among chunks embedded with `model`. */
  searchVector(input: VectorSearchInput): Promise<ScoredChunk[] | undefined>;
  storeEmbeddings(key: WorkspaceKey, model: string, embeddings: ChunkEmbedding[]): Promise<void>;
}
