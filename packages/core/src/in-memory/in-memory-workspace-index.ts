import type { RagScopeCondition } from "@aptix/contracts";
import { systemClock } from "../defaults/system-clock.js";
import type { Clock } from "../ports/clock.js";
import { QuotaExceededError } from "../ports/quota-exceeded-error.js";
import type {
  ChunkEmbedding,
  IndexedChunk,
  LexicalSearchInput,
  ScoredChunk,
  UpsertDocumentsInput,
  UpsertDocumentsOutcome,
  VectorSearchInput,
  WorkspaceIndex,
  WorkspaceKey,
  WorkspaceSummary,
} from "../ports/workspace-index.js";
import { codeSearchText } from "../retrieval/code-search-text.js";
import { matchesCondition } from "./in-memory-context-retriever.js";

/** A term found in a chunk's path counts this much more than one found once in its text. */
const PATH_WEIGHT = 2;
/** The factor a chunk's score is multiplied by for each boost hint (repo, language) it matches. */
const BOOST_FACTOR = 1.5;

interface StoredChunk extends IndexedChunk {
  /** How often each term occurs in the chunk's search text. */
  textTerms: Map<string, number>;
  pathTerms: Set<string>;
  /** By embedding model. */
  embeddings: Map<string, number[]>;
}

interface StoredWorkspace {
  updatedAt: Date;
  /** By path, each document's chunks in order. */
  documents: Map<string, { contentHash: string; sizeBytes: number; chunks: StoredChunk[] }>;
}

/**
 * A `WorkspaceIndex` in process memory, for tests and development. It filters by `ragScope` exactly as the
 * database adapters do (docs/knowledge.md) but ranks more simply: each query term found in a chunk's search text
 * scores `1 + ln(occurrences)`, one found in its path `PATH_WEIGHT` more, times the term's inverse document
 * frequency among the workspace's chunks (BM25's); each boost hint the chunk matches multiplies the score by
 * `BOOST_FACTOR`. Ties go by path, then line. Vector search is exact cosine
 * similarity. `updatedAt` is stamped with `clock` whenever a call writes or deletes something.
 */
export class InMemoryWorkspaceIndex implements WorkspaceIndex {
  readonly #workspaces = new Map<string, StoredWorkspace>();
  readonly #clock: Clock;

  constructor(clock: Clock = systemClock) {
    this.#clock = clock;
  }

  async upsertDocuments(input: UpsertDocumentsInput): Promise<UpsertDocumentsOutcome> {
    const paths = new Set<string>();
    for (const document of input.documents) {
      if (paths.has(document.path)) {
        throw new RangeError(`documents: the path ${JSON.stringify(document.path)} is given twice`);
      }
      paths.add(document.path);
    }
    const id = workspaceKeyOf(input.key);
    const workspace = this.#workspaces.get(id) ?? { updatedAt: this.#clock.now(), documents: new Map() };
    if (input.quotaBytes !== undefined) this.#judgeQuota(input, input.quotaBytes, paths);
    const outcome: UpsertDocumentsOutcome = {
      upserted: 0,
      unchanged: 0,
      deleted: 0,
      chunks: 0,
      insertedChunkIds: [],
      stalePaths: [],
    };
    for (const document of input.documents) {
      if (workspace.documents.get(document.path)?.contentHash === document.contentHash) {
        outcome.unchanged++;
        continue;
      }
      if (document.chunks === undefined) {
        outcome.stalePaths.push(document.path);
        continue;
      }
      const pathTerms = new Set(codeSearchText(document.path).split(" "));
      const chunks = document.chunks.map(
        (chunk): StoredChunk => ({
          chunkId: chunk.chunkId,
          path: document.path,
          startLine: chunk.startLine,
          endLine: chunk.endLine,
          language: document.language,
          repo: document.repo,
          tags: [...document.tags],
          metadata: { ...document.metadata },
          text: chunk.text,
          contentHash: document.contentHash,
          textTerms: termCounts(chunk.searchText),
          pathTerms,
          embeddings: new Map(),
        }),
      );
      const sizeBytes = document.sizeBytes ?? 0;
      workspace.documents.set(document.path, { contentHash: document.contentHash, sizeBytes, chunks });
      outcome.upserted++;
      outcome.insertedChunkIds.push(...chunks.map((chunk) => chunk.chunkId));
    }
    if (input.replace) {
      for (const path of [...workspace.documents.keys()]) {
        if (!paths.has(path)) {
          workspace.documents.delete(path);
          outcome.deleted++;
        }
      }
    }
    const created = !this.#workspaces.has(id);
    if (created || outcome.upserted > 0 || outcome.deleted > 0) workspace.updatedAt = this.#clock.now();
    this.#workspaces.set(id, workspace);
    outcome.chunks = chunkCount(workspace);
    return outcome;
  }

  /** Throws QuotaExceededError when the upsert would take its principal's documents past `quotaBytes`. */
  #judgeQuota(input: UpsertDocumentsInput, quotaBytes: number, paths: Set<string>): void {
    const written = workspaceKeyOf(input.key);
    let used = 0;
    for (const [id, { documents }] of this.#workspaces) {
      if ((JSON.parse(id) as [string, string])[0] !== input.key.principal) continue;
      for (const [path, document] of documents) {
        // The upsert's own documents count at their new size; those `replace` deletes not at all.
        if (id !== written || !(input.replace || paths.has(path))) used += document.sizeBytes;
      }
    }
    const added = input.documents.reduce((sum, document) => sum + (document.sizeBytes ?? 0), 0);
    if (used + added > quotaBytes) {
      throw new QuotaExceededError("APTIX_QUOTA_WORKSPACE_BYTES", used, added, quotaBytes);
    }
  }

  async documentHashes(key: WorkspaceKey, paths: string[]): Promise<Map<string, string>> {
    const documents = this.#workspaces.get(workspaceKeyOf(key))?.documents;
    const hashes = new Map<string, string>();
    for (const path of paths) {
      const contentHash = documents?.get(path)?.contentHash;
      if (contentHash !== undefined) hashes.set(path, contentHash);
    }
    return hashes;
  }

  async deleteDocuments(key: WorkspaceKey, paths: string[]): Promise<number | undefined> {
    const workspace = this.#workspaces.get(workspaceKeyOf(key));
    if (workspace === undefined) return undefined;
    let deleted = 0;
    for (const path of new Set(paths)) if (workspace.documents.delete(path)) deleted++;
    if (deleted > 0) workspace.updatedAt = this.#clock.now();
    return deleted;
  }

  async getWorkspace(key: WorkspaceKey): Promise<WorkspaceSummary | undefined> {
    const workspace = this.#workspaces.get(workspaceKeyOf(key));
    if (workspace === undefined) return undefined;
    return {
      principal: key.principal,
      workspaceId: key.workspaceId,
      documents: workspace.documents.size,
      chunks: chunkCount(workspace),
      updatedAt: new Date(workspace.updatedAt),
    };
  }

  async deleteWorkspace(key: WorkspaceKey): Promise<boolean> {
    return this.#workspaces.delete(workspaceKeyOf(key));
  }

  async searchLexical(input: LexicalSearchInput): Promise<ScoredChunk[] | undefined> {
    const workspace = this.#workspaces.get(workspaceKeyOf(input.key));
    if (workspace === undefined) return undefined;
    const chunks = chunksOf(workspace);
    const terms = [...new Set(input.terms)];
    const weights = terms.map((term) => {
      const holding = chunks.filter((chunk) => chunk.textTerms.has(term) || chunk.pathTerms.has(term)).length;
      return Math.log(1 + (chunks.length - holding + 0.5) / (holding + 0.5));
    });
    const scored: ScoredChunk[] = [];
    for (const chunk of chunks) {
      if (!matchesScope(chunk, input.scope)) continue;
      let score = 0;
      terms.forEach((term, at) => {
        const occurrences = chunk.textTerms.get(term) ?? 0;
        const found =
          (occurrences > 0 ? 1 + Math.log(occurrences) : 0) + (chunk.pathTerms.has(term) ? PATH_WEIGHT : 0);
        score += found * (weights[at] ?? 0);
      });
      if (score === 0) continue;
      if (input.boost.repo !== undefined && chunk.repo === input.boost.repo) score *= BOOST_FACTOR;
      if (input.boost.language !== undefined && chunk.language === input.boost.language)
        score *= BOOST_FACTOR;
      scored.push(publicChunk(chunk, score));
    }
    return best(scored, input.limit);
  }

  async searchVector(input: VectorSearchInput): Promise<ScoredChunk[] | undefined> {
    const workspace = this.#workspaces.get(workspaceKeyOf(input.key));
    if (workspace === undefined) return undefined;
    const scored: ScoredChunk[] = [];
    for (const chunk of chunksOf(workspace)) {
      const embedding = chunk.embeddings.get(input.model);
      if (embedding === undefined || !matchesScope(chunk, input.scope)) continue;
      scored.push(publicChunk(chunk, cosineSimilarity(embedding, input.embedding)));
    }
    return best(scored, input.limit);
  }

  async storeEmbeddings(key: WorkspaceKey, model: string, embeddings: ChunkEmbedding[]): Promise<void> {
    const workspace = this.#workspaces.get(workspaceKeyOf(key));
    if (workspace === undefined) return;
    const byId = new Map(chunksOf(workspace).map((chunk) => [chunk.chunkId, chunk]));
    for (const { chunkId, embedding } of embeddings) byId.get(chunkId)?.embeddings.set(model, [...embedding]);
  }
}

function workspaceKeyOf(key: WorkspaceKey): string {
  return JSON.stringify([key.principal, key.workspaceId]);
}

function chunksOf(workspace: StoredWorkspace): StoredChunk[] {
  return [...workspace.documents.values()].flatMap((document) => document.chunks);
}

function chunkCount(workspace: StoredWorkspace): number {
  let count = 0;
  for (const document of workspace.documents.values()) count += document.chunks.length;
  return count;
}

function termCounts(searchText: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const term of searchText.split(/\s+/)) {
    if (term !== "") counts.set(term, (counts.get(term) ?? 0) + 1);
  }
  return counts;
}

/**
 * Whether a chunk satisfies every condition. `path`, `language` and `repo` are tested as attributes (a null
 * repo is a missing one), `tag` by membership whatever the operator's kind, and any other key against the
 * document's metadata; the reserved keys shadow metadata entries of the same name.
 */
function matchesScope(chunk: StoredChunk, scope: readonly RagScopeCondition[]): boolean {
  return scope.every((condition) => {
    if (condition.key === "tag") {
      const member = condition.values.some((value) => chunk.tags.includes(value));
      return condition.operator === "==" || condition.operator === "contains" ? member : !member;
    }
    const attributes: Record<string, string> = {
      ...chunk.metadata,
      path: chunk.path,
      language: chunk.language,
    };
    if (chunk.repo === null) delete attributes.repo;
    else attributes.repo = chunk.repo;
    return matchesCondition(attributes, condition);
  });
}

function cosineSimilarity(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    dot += (a[i] ?? 0) * (b[i] ?? 0);
    normA += (a[i] ?? 0) ** 2;
    normB += (b[i] ?? 0) ** 2;
  }
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB);
}

function publicChunk(chunk: StoredChunk, score: number): ScoredChunk {
  return {
    chunkId: chunk.chunkId,
    path: chunk.path,
    startLine: chunk.startLine,
    endLine: chunk.endLine,
    language: chunk.language,
    repo: chunk.repo,
    tags: [...chunk.tags],
    metadata: { ...chunk.metadata },
    text: chunk.text,
    contentHash: chunk.contentHash,
    score,
  };
}

function best(scored: ScoredChunk[], limit: number): ScoredChunk[] {
  return scored
    .sort(
      (a, b) =>
        b.score - a.score || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) || a.startLine - b.startLine,
    )
    .slice(0, limit);
}
