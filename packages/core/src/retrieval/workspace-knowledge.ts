import {
  fail,
  type InvokeResult,
  ok,
  type PutWorkspaceDocumentsResponse,
  type RagScopeCondition,
  validateWorkspaceId,
  type WorkspaceDocument,
  type WorkspaceSearchChunk,
  type WorkspaceSummary,
} from "@aptix/contracts";
import { inProcessDocumentPreparation } from "../defaults/in-process-document-preparation.js";
import { systemClock } from "../defaults/system-clock.js";
import { errorMessage } from "../error-message.js";
import type { Clock } from "../ports/clock.js";
import type { ContentHashService } from "../ports/content-hash-service.js";
import type {
  ContextRetriever,
  Retrieval,
  RetrievalQuery,
  RetrievedChunk,
} from "../ports/context-retriever.js";
import type {
  ChunkingBounds,
  DocumentPreparation,
  PreparedChunk,
  PreparedDocument,
} from "../ports/document-preparation.js";
import type { Embedded, Embedder } from "../ports/embedder.js";
import type { IdGenerator } from "../ports/id-generator.js";
import { QuotaExceededError } from "../ports/quota-exceeded-error.js";
import type { UsageStore } from "../ports/usage-store.js";
import type {
  IndexChunkInput,
  IndexDocumentInput,
  ScoredChunk,
  WorkspaceIndex,
  WorkspaceKey,
} from "../ports/workspace-index.js";
import type { UsageEntry } from "../records/usage-entry.js";
import { codeQueryTerms } from "./code-search-text.js";
import { reciprocalRankFusion } from "./reciprocal-rank-fusion.js";

/** Embeddings of chunks and queries, when the configuration names a model. */
export interface KnowledgeEmbeddings {
  embedder: Embedder;
  model: string;
  /** Texts per embeddings request (default 64). */
  batchSize?: number;
}

export interface WorkspaceKnowledgeOptions {
  index: WorkspaceIndex;
  /** Hashes documents for the default `preparation`. */
  hashes: ContentHashService;
  /**
   * Hashes and cuts pushed documents: `inProcessDocumentPreparation(hashes)` by default, on the event loop; the
   * server passes worker threads.
   */
  preparation?: DocumentPreparation;
  ids: IdGenerator;
  embeddings?: KnowledgeEmbeddings;
  /**
   * Where each embeddings request's usage is kept (the session store), so it shows in usage reports and counts
   * against budgets. Absent: not kept.
   */
  usage?: Pick<UsageStore, "recordUsage">;
  /** When a request's usage counts. Default: the system clock. */
  clock?: Clock;
  /** Bounds of the chunker (see `chunkDocument`); its defaults otherwise. */
  chunking?: ChunkingBounds;
  /**
   * The most bytes of pushed contents (UTF-8) one principal's documents may take in all its workspaces; a push
   * that would pass it is refused whole with QUOTA_EXCEEDED. Absent: no quota.
   */
  quotaBytes?: number;
}

export interface UpsertWorkspaceInput extends WorkspaceKey {
  documents: readonly WorkspaceDocument[];
  replace?: boolean;
}

export interface SearchWorkspaceInput extends WorkspaceKey {
  query: string;
  ragScope?: readonly RagScopeCondition[];
  /** Chunks whose repo or language equals these rank higher; they never filter. */
  boost?: { repo?: string; language?: string };
  limit: number;
  /** The session and turn searching (turn-time retrieval): embedding the query is their usage. */
  asking?: { sessionId: string; turnId: string };
}

const utf8 = new TextEncoder();

/** Each ranking fused with the other looks this much deeper than the answer, so fusion has candidates to weigh. */
const FUSION_DEPTH = 3;
const MAX_FUSION_CANDIDATES = 150;

/**
 * The per-principal workspace knowledge (docs/knowledge.md): documents pushed by clients are hashed, cut into
 * code-aware chunks and kept in a `WorkspaceIndex`; searches rank them lexically and, when embeddings are
 * configured, also by vector similarity, fused by reciprocal rank. Another principal's workspace is unknown:
 * every method answers it as it answers an id nobody used. It is the `ContextRetriever` of user turns too.
 */
export class WorkspaceKnowledge implements ContextRetriever {
  readonly #index: WorkspaceIndex;
  readonly #preparation: DocumentPreparation;
  readonly #ids: IdGenerator;
  readonly #embeddings: KnowledgeEmbeddings | undefined;
  readonly #chunking: WorkspaceKnowledgeOptions["chunking"];
  readonly #quota: { quotaBytes?: number };
  readonly #usage: Pick<UsageStore, "recordUsage"> | undefined;
  readonly #clock: Clock;

  constructor(options: WorkspaceKnowledgeOptions) {
    this.#usage = options.usage;
    this.#clock = options.clock ?? systemClock;
    this.#quota = options.quotaBytes === undefined ? {} : { quotaBytes: options.quotaBytes };
    this.#index = options.index;
    this.#preparation = options.preparation ?? inProcessDocumentPreparation(options.hashes);
    this.#ids = options.ids;
    this.#embeddings = options.embeddings;
    this.#chunking = options.chunking;
  }

  /**
   * Upserts documents by path (creating the workspace when missing). Only the documents whose content hash
   * differs from the stored one are cut into chunks; the others keep their chunks and embeddings. `replace`
   * also deletes the documents not in the set. Only the chunks this call inserted are embedded. When embedding
   * fails, the documents this call changed are deleted again (PROVIDER_ERROR), so pushing them again re-chunks
   * and embeds them rather than finding them unchanged. A push that would take the principal past its quota
   * stores nothing (QUOTA_EXCEEDED). Throws when the index fails.
   */
  async upsert(input: UpsertWorkspaceInput): Promise<InvokeResult<PutWorkspaceDocumentsResponse>> {
    try {
      return await this.#upsert(input);
    } catch (error) {
      if (!(error instanceof QuotaExceededError)) throw error;
      const { quota, quotaBytes, usedBytes, addedBytes } = error;
      return fail("QUOTA_EXCEEDED", error.message, { quota, quotaBytes, usedBytes, addedBytes });
    }
  }

  async #upsert(input: UpsertWorkspaceInput): Promise<InvokeResult<PutWorkspaceDocumentsResponse>> {
    const workspaceId = validateWorkspaceId(input.workspaceId);
    if (!workspaceId.successful) return workspaceId;
    const key = keyOf(input);
    const stored = await this.#index.documentHashes(
      key,
      input.documents.map((document) => document.path),
    );
    const prepare = async (document: WorkspaceDocument, storedHash: string | undefined) => ({
      document,
      ...(await this.#preparation.prepare({
        document,
        ...(storedHash === undefined ? {} : { storedHash }),
        ...(this.#chunking ? { chunking: this.#chunking } : {}),
      })),
    });
    const documents = await Promise.all(
      input.documents.map((document) => prepare(document, stored.get(document.path))),
    );
    const inserted = new Map<string, { path: string; text: string }>();
    const indexed = (entry: PreparedDocument & { document: WorkspaceDocument }): IndexDocumentInput => ({
      path: entry.document.path,
      contentHash: entry.contentHash,
      language: entry.language,
      repo: entry.document.repo ?? null,
      tags: entry.document.tags ?? [],
      metadata: entry.document.metadata ?? {},
      sizeBytes: utf8.encode(entry.document.contents).byteLength,
      ...(entry.chunks ? { chunks: this.#withIds(entry.document.path, entry.chunks, inserted) } : {}),
    });
    let outcome = await this.#index.upsertDocuments({
      key,
      documents: documents.map(indexed),
      replace: input.replace ?? false,
      ...this.#quota,
    });
    if (outcome.stalePaths.length > 0) {
      // Another push changed them after the hashes were read: cut them after all. Documents given with their
      // chunks are never stale, so one more upsert settles them.
      const stale = new Set(outcome.stalePaths);
      const again = await this.#index.upsertDocuments({
        key,
        documents: await Promise.all(
          documents
            .filter((entry) => stale.has(entry.document.path))
            .map(async (entry) => indexed(await prepare(entry.document, undefined))),
        ),
        replace: false,
        ...this.#quota,
      });
      outcome = {
        upserted: outcome.upserted + again.upserted,
        unchanged: outcome.unchanged + again.unchanged,
        deleted: outcome.deleted + again.deleted,
        chunks: again.chunks,
        insertedChunkIds: [...outcome.insertedChunkIds, ...again.insertedChunkIds],
        stalePaths: again.stalePaths,
      };
    }
    const toEmbed = outcome.insertedChunkIds.flatMap((chunkId) => {
      const chunk = inserted.get(chunkId);
      return chunk ? [{ chunkId, ...chunk }] : [];
    });
    try {
      await this.#embed(key, toEmbed);
    } catch (error) {
      if (!(error instanceof EmbeddingError)) throw error;
      const changed = [...new Set(toEmbed.map((chunk) => chunk.path))];
      await this.#index.deleteDocuments(key, changed);
      return fail(
        "PROVIDER_ERROR",
        `${error.message} The ${changed.length} new or changed document(s) were not kept; push them again.`,
        { model: error.model, paths: changed },
      );
    }
    const { upserted, unchanged, deleted, chunks } = outcome;
    return ok({ workspaceId: key.workspaceId, upserted, unchanged, deleted, chunks });
  }

  /** Deletes documents by path; WORKSPACE_NOT_FOUND when the principal has no such workspace. */
  async removeDocuments(
    key: WorkspaceKey,
    paths: readonly string[],
  ): Promise<InvokeResult<{ deleted: number }>> {
    if (namesNothing(key)) return workspaceNotFound(key);
    const deleted = await this.#index.deleteDocuments(keyOf(key), [...paths]);
    return deleted === undefined ? workspaceNotFound(key) : ok({ deleted });
  }

  async get(key: WorkspaceKey): Promise<InvokeResult<WorkspaceSummary>> {
    const summary = namesNothing(key) ? undefined : await this.#index.getWorkspace(keyOf(key));
    if (summary === undefined) return workspaceNotFound(key);
    const { workspaceId, documents, chunks, updatedAt } = summary;
    return ok({ workspaceId, documents, chunks, updatedAt });
  }

  /** Drops the workspace and its whole index. */
  async drop(key: WorkspaceKey): Promise<InvokeResult<{ workspaceId: string }>> {
    const dropped = !namesNothing(key) && (await this.#index.deleteWorkspace(keyOf(key)));
    return dropped ? ok({ workspaceId: key.workspaceId }) : workspaceNotFound(key);
  }

  /**
   * The workspace's chunks best first for `query` (as `POST …/search` answers them, `id` being the index's chunk
   * id), at most `limit`, filtered by `ragScope`: lexical ranking
   * over code-aware terms, fused with vector similarity when embeddings are configured. WORKSPACE_NOT_FOUND
   * when the principal has no such workspace, PROVIDER_ERROR when the query cannot be embedded. Throws when
   * the index fails.
   */
  async search(input: SearchWorkspaceInput): Promise<InvokeResult<WorkspaceSearchChunk[]>> {
    let found: ScoredChunk[] | undefined;
    try {
      found = await this.#search(input);
    } catch (error) {
      if (!(error instanceof EmbeddingError)) throw error;
      return fail("PROVIDER_ERROR", error.message, { model: error.model });
    }
    if (found === undefined) return workspaceNotFound(input);
    return ok(
      found.map((chunk) => {
        const { chunkId, ...rest } = retrievedChunk(chunk);
        return { id: chunkId, ...rest };
      }),
    );
  }

  async retrieve(query: RetrievalQuery): Promise<Retrieval> {
    const key = { principal: query.principal, workspaceId: query.workspaceId };
    const found = await this.#search({
      ...key,
      query: query.text,
      ragScope: query.scope,
      boost: query.boost,
      limit: query.limit,
      asking: { sessionId: query.sessionId, turnId: query.turnId },
    });
    if (found === undefined) return { type: "unknown_workspace" };
    if (found.length === 0 && (await this.#index.getWorkspace(key))?.chunks === 0)
      return { type: "empty_index" };
    return { type: "found", chunks: found.map(retrievedChunk) };
  }

  /** The document's chunks with fresh ids, each noted in `inserted` (by id) for embedding. */
  #withIds(
    path: string,
    chunks: readonly PreparedChunk[],
    inserted: Map<string, { path: string; text: string }>,
  ): IndexChunkInput[] {
    return chunks.map((chunk) => {
      const chunkId = this.#ids.newId("chunk");
      inserted.set(chunkId, { path, text: chunk.text });
      return { chunkId, ...chunk };
    });
  }

  async #search(input: SearchWorkspaceInput): Promise<ScoredChunk[] | undefined> {
    if (namesNothing(input)) return undefined;
    const key = keyOf(input);
    const scope = [...(input.ragScope ?? [])];
    const boost = input.boost ?? {};
    const terms = codeQueryTerms(input.query);
    const embeddings = this.#embeddings;
    const depth = embeddings ? Math.min(input.limit * FUSION_DEPTH, MAX_FUSION_CANDIDATES) : input.limit;
    // A query of stop words alone has nothing to match lexically; the workspace may still be unknown.
    const lexical =
      terms.length > 0
        ? await this.#index.searchLexical({ key, terms, scope, boost, limit: depth })
        : (await this.#index.getWorkspace(key)) === undefined
          ? undefined
          : [];
    if (lexical === undefined || !embeddings) return lexical;
    const [embedding] = await this.#embedTexts([input.query], {
      principal: input.principal,
      sessionId: input.asking?.sessionId ?? null,
      turnId: input.asking?.turnId ?? null,
    });
    const vector = await this.#index.searchVector({
      key,
      model: embeddings.model,
      embedding: embedding ?? [],
      scope,
      limit: depth,
    });
    const fused = reciprocalRankFusion([lexical, vector ?? []], (chunk) => chunk.chunkId);
    return fused.slice(0, input.limit).map(({ item, score }) => ({ ...item, score }));
  }

  async #embed(key: WorkspaceKey, chunks: readonly { chunkId: string; text: string }[]): Promise<void> {
    const embeddings = this.#embeddings;
    if (!embeddings || chunks.length === 0) return;
    const vectors = await this.#embedTexts(
      chunks.map((chunk) => chunk.text),
      { principal: key.principal, sessionId: null, turnId: null },
    );
    await this.#index.storeEmbeddings(
      key,
      embeddings.model,
      chunks.map((chunk, index) => ({ chunkId: chunk.chunkId, embedding: vectors[index] ?? [] })),
    );
  }

  /** Embeds in batches of `batchSize`, in order, keeping each request's usage as the spender's. */
  async #embedTexts(texts: readonly string[], spender: Spender): Promise<number[][]> {
    const embeddings = this.#embeddings;
    if (!embeddings) return [];
    const batchSize = embeddings.batchSize ?? 64;
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += batchSize) {
      const batch = texts.slice(start, start + batchSize);
      const startedAt = this.#clock.now();
      let answered: Embedded;
      try {
        answered = await embeddings.embedder.embed({ model: embeddings.model, texts: batch });
      } catch (error) {
        throw new EmbeddingError(
          embeddings.model,
          `Embedding with ${embeddings.model} failed: ${errorMessage(error)}.`,
          error,
        );
      }
      // Spent whatever the answer holds; a store that fails to keep it fails the push or search, unlike the provider.
      await this.#usage?.recordUsage([
        {
          callId: this.#ids.newId("embedding"),
          ...spender,
          index: null,
          provider: embeddings.embedder.id,
          model: embeddings.model,
          inputTokens: answered.inputTokens,
          cachedInputTokens: 0,
          outputTokens: 0,
          reasoningTokens: 0,
          startedAt,
        },
      ]);
      const embedded = answered.vectors;
      if (embedded.length !== batch.length) {
        throw new EmbeddingError(
          embeddings.model,
          `Embedding with ${embeddings.model} answered ${embedded.length} vectors for ${batch.length} texts.`,
        );
      }
      vectors.push(...embedded);
    }
    return vectors;
  }
}

/** Whose usage an embeddings request is: a principal's, and the session and turn that asked, if any. */
type Spender = Pick<UsageEntry, "principal" | "sessionId" | "turnId">;

/** The embedder failed: a provider's failure, not the index's. */
class EmbeddingError extends Error {
  constructor(
    readonly model: string,
    message: string,
    cause?: unknown,
  ) {
    super(message, { cause });
  }
}

/**
 * A workspace id that breaks the contracts' rule for one (a NUL or a lone surrogate, which Postgres cannot even
 * compare; too long) names nothing: no push could have created it, so it is unknown without asking the index.
 */
function namesNothing({ workspaceId }: WorkspaceKey): boolean {
  return !validateWorkspaceId(workspaceId).successful;
}

function keyOf({ principal, workspaceId }: WorkspaceKey): WorkspaceKey {
  return { principal, workspaceId };
}

function workspaceNotFound({ workspaceId }: WorkspaceKey) {
  return fail(
    "WORKSPACE_NOT_FOUND",
    `No workspace ${JSON.stringify(workspaceId)} exists; push documents to create it.`,
    {
      workspaceId,
    },
  );
}

function retrievedChunk({
  chunkId,
  path,
  startLine,
  endLine,
  language,
  text,
  score,
}: ScoredChunk): RetrievedChunk {
  return { chunkId, path, startLine, endLine, language, text, score };
}
