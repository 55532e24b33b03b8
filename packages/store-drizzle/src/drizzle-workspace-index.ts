import { setImmediate } from "node:timers/promises";
import {
  type ChunkEmbedding,
  type Clock,
  codeSearchText,
  type IndexDocumentInput,
  type LexicalSearchInput,
  type ScoredChunk,
  systemClock,
  type UpsertDocumentsInput,
  type UpsertDocumentsOutcome,
  type VectorSearchInput,
  type WorkspaceIndex,
  type WorkspaceKey,
  type WorkspaceSummary,
} from "@aptix/core";
import { and, asc, desc, eq, inArray, not, type SQL, sql } from "drizzle-orm";
import type { StoreDatabase } from "./drizzle-session-store.js";
import { rowsOf } from "./rows-of.js";
import {
  workspaceChunks,
  workspaceDocuments,
  workspaceEmbeddings,
  workspaces,
  workspaceTerms,
} from "./schema.js";
import { judgeWorkspaceQuota } from "./workspace-quota.js";

type StoreTransaction = Parameters<Parameters<StoreDatabase["transaction"]>[0]>[0];
type Executor = StoreDatabase | StoreTransaction;
type RagScopeCondition = LexicalSearchInput["scope"][number];

export interface DrizzleWorkspaceIndexOptions {
  /** Stamps `updatedAt`. Default: the system clock. */
  clock?: Clock;
  /**
   * The schema the `vector` extension (pgvector) lives in, as `openStore` found it with `vectors: true`;
   * without it `searchVector` throws, since cosine distance is pgvector's.
   */
  vectorSchema?: string;
}

/**
 * The outer workspace row's id, qualified: drizzle leaves columns unqualified in a single-table select, and a
 * subquery over a table with an `id` of its own would read that one.
 */
const WORKSPACE_ROW = sql`${workspaces}.${sql.identifier(workspaces.id.name)}`;

/**
 * BM25's parameters (term-frequency saturation, length normalization). A term's frequency in a chunk counts its
 * occurrences in the text (weight D) and `PATH_WEIGHT / TEXT_WEIGHT` times those in the path (weight A), read
 * with `ts_rank_cd` over the one term: with normalization 0 it adds up the weights of the term's occurrences.
 */
const BM25_K1 = 1.2;
const BM25_B = 0.75;
const TEXT_WEIGHT = 0.5;
const PATH_WEIGHT = 1;
/** ts_rank_cd's weights for labels D, C, B, A: the text is D, the path A. */
const TERM_WEIGHTS = `{${TEXT_WEIGHT},0,0,${PATH_WEIGHT}}`;
/**
 * About how many chunks a search scores: candidates are the chunks holding the rarest query terms, as many
 * terms as fit (and always the rarest one), so a question full of common words stays fast.
 */
const CANDIDATE_BUDGET = 500;

/** Query terms a search uses: the first ones, as a bound on the statement's size. */
export const MAX_QUERY_TERMS = 64;
/** The factor a chunk's score is multiplied by for each boost hint (repo, language) it matches. */
const BOOST_FACTOR = 1.5;
/**
 * Rows per INSERT, and chunk text per INSERT (UTF-16 code units): well below Postgres's 65,535 parameters a
 * statement, and small enough that one statement, with the tsvectors and GIN entries it computes, takes tens of
 * milliseconds. On PGlite each statement runs on the event loop's thread, so its length is how long a request
 * such as `/healthz` waits.
 */
const DOCUMENT_BATCH = 1_000;
const CHUNK_BATCH = 50;
const CHUNK_BATCH_CHARS = 128 * 1024;

/**
 * The `WorkspaceIndex` on drizzle (docs/knowledge.md), on Postgres and PGlite alike. Lexical search is Postgres
 * full-text search ranked by BM25: chunks are found through the GIN index on their `search_vector` (the path's
 * code-aware terms at weight A, the text's at weight D), and each query term a chunk holds adds its inverse
 * document frequency (from `workspace_terms`, kept by every write) times its saturated, length-normalized
 * frequency in the chunk; each boost hint the chunk matches multiplies the score by `BOOST_FACTOR`. Scope
 * conditions and boosts are compiled into the statement as parameters, so the limit applies to chunks already
 * filtered. A search sends two statements: the terms' statistics, then the ranking. Writes to one workspace
 * take turns on its row's lock and are atomic.
 */
export class DrizzleWorkspaceIndex implements WorkspaceIndex {
  readonly #db: StoreDatabase;
  readonly #clock: Clock;
  readonly #vectorSchema: string | undefined;

  constructor(db: StoreDatabase, options: DrizzleWorkspaceIndexOptions = {}) {
    this.#db = db;
    this.#clock = options.clock ?? systemClock;
    this.#vectorSchema = options.vectorSchema;
  }

  async upsertDocuments(input: UpsertDocumentsInput): Promise<UpsertDocumentsOutcome> {
    const paths = distinctPaths(input.documents);
    return this.#db.transaction(async (tx) => {
      const now = this.#clock.now();
      // Creates the workspace or locks its row, so concurrent pushes to one workspace take turns.
      const [workspace] = await tx
        .insert(workspaces)
        .values({ principal: input.key.principal, workspaceId: input.key.workspaceId, updatedAt: now })
        .onConflictDoUpdate({
          target: [workspaces.principal, workspaces.workspaceId],
          set: { updatedAt: sql`${workspaces.updatedAt}` },
        })
        .returning({ id: workspaces.id });
      if (workspace === undefined) throw new Error("The workspace upsert returned no row.");
      const { quotaBytes } = input;
      if (quotaBytes !== undefined)
        await judgeWorkspaceQuota(tx, { ...input, quotaBytes }, workspace.id, paths);

      const stored = new Map(
        (
          await tx
            .select({
              id: workspaceDocuments.id,
              path: workspaceDocuments.path,
              hash: workspaceDocuments.contentHash,
            })
            .from(workspaceDocuments)
            .where(and(eq(workspaceDocuments.workspace, workspace.id), inPaths(paths)))
        ).map((row) => [row.path, row]),
      );
      const differing = input.documents.filter(
        (document) => stored.get(document.path)?.hash !== document.contentHash,
      );
      // Without chunks, the caller believed the hash stored: another push came between, so nothing is written.
      const stalePaths = differing.flatMap((document) =>
        document.chunks === undefined ? [document.path] : [],
      );
      const changed = differing.filter(
        (document): document is ChunkedDocument => document.chunks !== undefined,
      );
      const outdated = changed.flatMap((document) => stored.get(document.path)?.id ?? []);
      const replaced =
        outdated.length > 0
          ? await deleteDocuments(tx, workspace.id, inArray(workspaceDocuments.id, outdated))
          : NONE;
      const deleted = input.replace
        ? await deleteDocuments(
            tx,
            workspace.id,
            and(eq(workspaceDocuments.workspace, workspace.id), not(inPaths(paths))) as SQL,
          )
        : NONE;
      const inserted = await insertDocuments(tx, workspace.id, changed);

      const written = changed.length > 0 || deleted.documents > 0;
      const [totals] = await tx
        .update(workspaces)
        .set({
          chunkCount: sql`${workspaces.chunkCount} + ${inserted.chunkIds.length - replaced.chunks - deleted.chunks}`,
          termTotal: sql`${workspaces.termTotal} + ${inserted.terms - replaced.terms - deleted.terms}`,
          ...(written ? { updatedAt: now } : {}),
        })
        .where(eq(workspaces.id, workspace.id))
        .returning({ chunks: workspaces.chunkCount });
      return {
        upserted: changed.length,
        unchanged: input.documents.length - differing.length,
        deleted: deleted.documents,
        chunks: totals?.chunks ?? 0,
        insertedChunkIds: inserted.chunkIds,
        stalePaths,
      };
    });
  }

  async documentHashes(key: WorkspaceKey, paths: string[]): Promise<Map<string, string>> {
    if (paths.length === 0) return new Map();
    const rows = await this.#db
      .select({ path: workspaceDocuments.path, hash: workspaceDocuments.contentHash })
      .from(workspaceDocuments)
      .innerJoin(workspaces, eq(workspaces.id, workspaceDocuments.workspace))
      .where(and(keyIs(key), inArray(workspaceDocuments.path, paths)));
    return new Map(rows.map((row) => [row.path, row.hash]));
  }

  async deleteDocuments(key: WorkspaceKey, paths: string[]): Promise<number | undefined> {
    return this.#db.transaction(async (tx) => {
      const id = await workspaceIdOf(tx, key, true);
      if (id === undefined) return undefined;
      if (paths.length === 0) return 0;
      const deleted = await deleteDocuments(
        tx,
        id,
        and(eq(workspaceDocuments.workspace, id), inArray(workspaceDocuments.path, paths)) as SQL,
      );
      if (deleted.documents > 0) {
        await tx
          .update(workspaces)
          .set({
            updatedAt: this.#clock.now(),
            chunkCount: sql`${workspaces.chunkCount} - ${deleted.chunks}`,
            termTotal: sql`${workspaces.termTotal} - ${deleted.terms}`,
          })
          .where(eq(workspaces.id, id));
      }
      return deleted.documents;
    });
  }

  async getWorkspace(key: WorkspaceKey): Promise<WorkspaceSummary | undefined> {
    const [row] = await this.#db
      .select({
        updatedAt: workspaces.updatedAt,
        documents:
          sql<number>`(select count(*) from ${workspaceDocuments} where ${workspaceDocuments.workspace} = ${WORKSPACE_ROW})`.mapWith(
            Number,
          ),
        chunks: workspaces.chunkCount,
      })
      .from(workspaces)
      .where(keyIs(key));
    if (row === undefined) return undefined;
    return { principal: key.principal, workspaceId: key.workspaceId, ...row };
  }

  async deleteWorkspace(key: WorkspaceKey): Promise<boolean> {
    return this.#db.transaction(async (tx) => {
      const id = await workspaceIdOf(tx, key, true);
      if (id === undefined) return false;
      await tx.delete(workspaceTerms).where(eq(workspaceTerms.workspace, id));
      await deleteDocuments(tx, undefined, eq(workspaceDocuments.workspace, id));
      await tx.delete(workspaces).where(eq(workspaces.id, id));
      return true;
    });
  }

  async searchLexical(input: LexicalSearchInput): Promise<ScoredChunk[] | undefined> {
    const terms = [...new Set(input.terms)].slice(0, MAX_QUERY_TERMS);
    const found = await this.#db
      .select({
        id: workspaces.id,
        chunks: workspaces.chunkCount,
        termTotal: workspaces.termTotal,
        term: workspaceTerms.term,
        df: workspaceTerms.chunks,
      })
      .from(workspaces)
      .leftJoin(
        workspaceTerms,
        and(
          eq(workspaceTerms.workspace, workspaces.id),
          terms.length === 0 ? sql`false` : inArray(workspaceTerms.term, terms),
        ),
      )
      .where(keyIs(input.key));
    const stats = found[0];
    if (stats === undefined) return undefined;
    const weighted = found
      .flatMap(({ term, df }) => (term === null || df === null || df <= 0 ? [] : [{ term, df }]))
      .map(({ term, df }) => ({ term, df, idf: Math.log(1 + (stats.chunks - df + 0.5) / (df + 0.5)) }))
      .sort((a, b) => a.df - b.df);
    if (weighted.length === 0 || input.limit <= 0) return [];

    // Candidates: the chunks holding one of the rarest terms, as many terms as CANDIDATE_BUDGET allows (at
    // least one); every term then counts in their scores. A chunk with only common terms would rank low anyway.
    const candidateTerms: string[] = [];
    let budget = 0;
    for (const { term, df } of weighted) {
      if (candidateTerms.length > 0 && budget + df > CANDIDATE_BUDGET) break;
      candidateTerms.push(term);
      budget += df;
    }
    const candidates = sql.join(
      candidateTerms.map(
        (term) =>
          sql`select chunk_id from workspace_chunks where search_vector @@ ${tsqueryLexeme(term)}::tsquery and workspace = ${stats.id}`,
      ),
      sql` union `,
    );
    const averageLength = Math.max(stats.termTotal / Math.max(stats.chunks, 1), 1);
    // Each term's frequency in the chunk: its `ts_rank_cd` over the term alone (see TERM_WEIGHTS).
    const frequencies = sql.join(
      weighted.map(
        ({ term }, at) =>
          sql`ts_rank_cd(${TERM_WEIGHTS}::float4[], workspace_chunks.search_vector, ${tsqueryLexeme(term)}::tsquery, 0) / ${TEXT_WEIGHT}::float8 as ${sql.identifier(`f${at}`)}`,
      ),
      sql`, `,
    );
    const bm25 = sql.join(
      weighted.map(({ idf }, at) => {
        const tf = sql`tf.${sql.identifier(`f${at}`)}`;
        return sql`${idf * (BM25_K1 + 1)}::float8 * ${tf} / (${tf} + tf.k)`;
      }),
      sql` + `,
    );
    const scope = scopeCondition(input.scope);
    // Ranks on the columns scoring needs, then reads the texts of the winners only.
    const rows = await this.#db.execute(sql`
      with candidates as (${candidates}),
      ranked as (
        select workspace_chunks.chunk_id, (${bm25}) * ${boostFactor(input.boost)} as score
        from candidates
        join workspace_chunks on workspace_chunks.chunk_id = candidates.chunk_id
        join workspace_documents on workspace_documents.id = workspace_chunks.document
        -- Once per row (offset 0 keeps the planner from copying each frequency into the score twice).
        cross join lateral (
          select ${frequencies},
            ${BM25_K1}::float8 * (1 - ${BM25_B}::float8 + ${BM25_B}::float8 * workspace_chunks.term_count / ${averageLength}::float8) as k
          offset 0
        ) tf
        ${scope === undefined ? sql`` : sql`where ${scope}`}
        order by score desc, workspace_documents.path, workspace_chunks.start_line
        limit ${input.limit}
      )
      select workspace_chunks.chunk_id, workspace_documents.path, workspace_chunks.start_line,
        workspace_chunks.end_line, workspace_documents.language, workspace_documents.repo, workspace_documents.tags,
        workspace_documents.metadata, workspace_chunks.text, workspace_documents.content_hash, ranked.score
      from ranked
      join workspace_chunks on workspace_chunks.chunk_id = ranked.chunk_id
      join workspace_documents on workspace_documents.id = workspace_chunks.document
      order by ranked.score desc, workspace_documents.path, workspace_chunks.start_line`);
    return rowsOf(rows).map(scoredChunk);
  }

  async searchVector(input: VectorSearchInput): Promise<ScoredChunk[] | undefined> {
    const schema = this.#vectorSchema;
    if (schema === undefined) {
      throw new Error(
        "Vector search needs the store opened with `vectors: true` (the pgvector `vector` extension).",
      );
    }
    const id = await workspaceIdOf(this.#db, input.key, false);
    if (id === undefined) return undefined;
    if (input.limit <= 0) return [];
    const vector = sql.raw(`${quoteIdentifier(schema)}.vector`);
    const distance = sql`${sql.raw(quoteIdentifier(schema))}.cosine_distance(${workspaceEmbeddings.embedding}::${vector}, ${JSON.stringify(input.embedding)}::${vector})`;
    return this.#rankedChunks(
      sql<number>`1 - ${distance}`.mapWith(Number),
      and(
        eq(workspaceChunks.workspace, id),
        eq(workspaceEmbeddings.model, input.model),
        scopeCondition(input.scope),
      ),
      input.limit,
      true,
    );
  }

  async storeEmbeddings(key: WorkspaceKey, model: string, embeddings: ChunkEmbedding[]): Promise<void> {
    if (embeddings.length === 0) return;
    const rows = sql.join(
      embeddings.map(({ chunkId, embedding }) => sql`(${chunkId}, ${`{${embedding.join(",")}}`})`),
      sql`, `,
    );
    // Only chunks of the key's workspace are embedded: ids of another principal's chunks join nothing.
    await this.#db.execute(sql`
      insert into ${workspaceEmbeddings} (chunk_id, model, embedding)
      select c.chunk_id, ${model}, given.embedding::real[]
      from (values ${rows}) as given (chunk_id, embedding)
      join ${workspaceChunks} c on c.chunk_id = given.chunk_id
      join ${workspaces} w on w.id = c.workspace
      where w.principal = ${key.principal} and w.workspace_id = ${key.workspaceId}
      on conflict (chunk_id, model) do update set embedding = excluded.embedding`);
  }

  /** The chunks matching `where`, best `score` first, ties by path and line. */
  async #rankedChunks(score: SQL<number>, where: SQL | undefined, limit: number, embedded = false) {
    const select = this.#db
      .select({
        chunkId: workspaceChunks.chunkId,
        path: workspaceDocuments.path,
        startLine: workspaceChunks.startLine,
        endLine: workspaceChunks.endLine,
        language: workspaceDocuments.language,
        repo: workspaceDocuments.repo,
        tags: workspaceDocuments.tags,
        metadata: workspaceDocuments.metadata,
        text: workspaceChunks.text,
        contentHash: workspaceDocuments.contentHash,
        score,
      })
      .from(workspaceChunks)
      .innerJoin(workspaceDocuments, eq(workspaceDocuments.id, workspaceChunks.document));
    const joined = embedded
      ? select.innerJoin(workspaceEmbeddings, eq(workspaceEmbeddings.chunkId, workspaceChunks.chunkId))
      : select;
    return joined
      .where(where)
      .orderBy(desc(score), asc(workspaceDocuments.path), asc(workspaceChunks.startLine))
      .limit(limit);
  }
}

/** A document given with its chunks: one the index writes when its hash changed. */
type ChunkedDocument = IndexDocumentInput & Required<Pick<IndexDocumentInput, "chunks">>;

/** The paths of `documents`, refusing one given twice: an upsert names each document once. */
function distinctPaths(documents: readonly IndexDocumentInput[]): string[] {
  const paths = new Set<string>();
  for (const { path } of documents) {
    if (paths.has(path)) throw new RangeError(`documents: the path ${JSON.stringify(path)} is given twice`);
    paths.add(path);
  }
  return [...paths];
}

function keyIs(key: WorkspaceKey): SQL {
  return and(eq(workspaces.principal, key.principal), eq(workspaces.workspaceId, key.workspaceId)) as SQL;
}

function inPaths(paths: string[]): SQL {
  return paths.length === 0 ? sql`false` : inArray(workspaceDocuments.path, paths);
}

/** The workspace's row id; `lock` takes its row lock, so writes to one workspace take turns. */
async function workspaceIdOf(db: Executor, key: WorkspaceKey, lock: boolean): Promise<number | undefined> {
  const select = db.select({ id: workspaces.id }).from(workspaces).where(keyIs(key));
  const [row] = await (lock ? select.for("update") : select);
  return row?.id;
}

/** What `deleteDocuments` removed: documents, their chunks, and the chunks' terms added up. */
interface Deleted {
  documents: number;
  chunks: number;
  terms: number;
}

const NONE: Deleted = { documents: 0, chunks: 0, terms: 0 };

/**
 * Deletes the documents matching `where` with their chunks and embeddings (there are no cascading keys), and
 * takes their chunks out of the workspace's term frequencies unless `workspace` is undefined (when the whole
 * workspace goes). Leaves the workspace row's totals to the caller.
 */
async function deleteDocuments(
  tx: StoreTransaction,
  workspace: number | undefined,
  where: SQL,
): Promise<Deleted> {
  const documents = tx.select({ id: workspaceDocuments.id }).from(workspaceDocuments).where(where);
  const chunks = tx
    .select({ chunkId: workspaceChunks.chunkId })
    .from(workspaceChunks)
    .where(inArray(workspaceChunks.document, documents));
  if (workspace !== undefined) {
    await tx.execute(sql`
      update workspace_terms set chunks = workspace_terms.chunks - gone.chunks
      from (
        select lexeme, count(*)::int as chunks
        from workspace_chunks, unnest(tsvector_to_array(workspace_chunks.search_vector)) as lexeme
        where workspace_chunks.document in (${documents})
        group by lexeme
      ) as gone
      where workspace_terms.workspace = ${workspace} and workspace_terms.term = gone.lexeme`);
    await tx
      .delete(workspaceTerms)
      .where(and(eq(workspaceTerms.workspace, workspace), sql`${workspaceTerms.chunks} <= 0`));
  }
  await tx.delete(workspaceEmbeddings).where(inArray(workspaceEmbeddings.chunkId, chunks));
  const deletedChunks = await tx
    .delete(workspaceChunks)
    .where(inArray(workspaceChunks.document, documents))
    .returning({ termCount: workspaceChunks.termCount });
  const deleted = await tx.delete(workspaceDocuments).where(where).returning({ id: workspaceDocuments.id });
  return {
    documents: deleted.length,
    chunks: deletedChunks.length,
    terms: deletedChunks.reduce((sum, chunk) => sum + chunk.termCount, 0),
  };
}

/**
 * Inserts the documents and their chunks and counts the chunks' terms into the workspace's term frequencies;
 * answers the inserted chunks' ids and their terms added up. Writes in bounded batches (see `CHUNK_BATCH`), each
 * batch of chunks followed by its terms, and lets the event loop take its turn between them: PGlite resolves a
 * statement without one, so a long write would otherwise hold every request until it commits.
 */
async function insertDocuments(
  tx: StoreTransaction,
  workspace: number,
  documents: readonly ChunkedDocument[],
): Promise<{ chunkIds: string[]; terms: number }> {
  const idOf = new Map<string, number>();
  for (const batch of batches(documents, DOCUMENT_BATCH, () => 0)) {
    const inserted = await tx
      .insert(workspaceDocuments)
      .values(
        batch.map((document) => ({
          workspace,
          path: document.path,
          contentHash: document.contentHash,
          language: document.language,
          repo: document.repo,
          tags: document.tags,
          metadata: document.metadata,
          sizeBytes: document.sizeBytes ?? 0,
        })),
      )
      .returning({ id: workspaceDocuments.id, path: workspaceDocuments.path });
    for (const row of inserted) idOf.set(row.path, row.id);
    await setImmediate();
  }
  const chunks = documents.flatMap((document) => {
    const pathSearchText = codeSearchText(document.path);
    const id = idOf.get(document.path) ?? 0;
    return document.chunks.map((chunk) => ({ chunk, document: id, pathSearchText }));
  });
  // The GIN index of search vectors queues new entries and merges them in bulk once the queue passes this
  // limit (4 MB by default), in whichever INSERT passes it: seconds of one statement on PGlite. The least limit
  // (64 kB) has each batch merge its own entries.
  if (chunks.length > 0) await tx.execute(sql`set local gin_pending_list_limit = 64`);
  let terms = 0;
  for (const batch of batches(chunks, CHUNK_BATCH, ({ chunk }) => chunk.text.length)) {
    const rows = batch.map(({ chunk, document, pathSearchText }) => ({
      chunkId: chunk.chunkId,
      document,
      workspace,
      startLine: chunk.startLine,
      endLine: chunk.endLine,
      text: chunk.text,
      pathSearchText,
      searchText: chunk.searchText,
      termCount: termCount(chunk.searchText),
    }));
    await tx.insert(workspaceChunks).values(rows);
    await tx.execute(sql`
      insert into workspace_terms (workspace, term, chunks)
      select ${workspace}, lexeme, count(*)::int
      from workspace_chunks, unnest(tsvector_to_array(workspace_chunks.search_vector)) as lexeme
      where workspace_chunks.chunk_id in (${sql.join(
        rows.map((row) => sql`${row.chunkId}`),
        sql`, `,
      )})
      group by lexeme
      on conflict (workspace, term) do update set chunks = workspace_terms.chunks + excluded.chunks`);
    terms += rows.reduce((sum, row) => sum + row.termCount, 0);
    await setImmediate();
  }
  return { chunkIds: chunks.map(({ chunk }) => chunk.chunkId), terms };
}

/**
 * `items` in order, cut into runs of at most `rows` items and, unless a single item exceeds it alone, at most
 * `CHUNK_BATCH_CHARS` of `sizeOf`.
 */
function* batches<T>(items: readonly T[], rows: number, sizeOf: (item: T) => number): Generator<T[]> {
  let batch: T[] = [];
  let size = 0;
  for (const item of items) {
    const itemSize = sizeOf(item);
    if (batch.length > 0 && (batch.length >= rows || size + itemSize > CHUNK_BATCH_CHARS)) {
      yield batch;
      batch = [];
      size = 0;
    }
    batch.push(item);
    size += itemSize;
  }
  if (batch.length > 0) yield batch;
}

/**
 * `term` as a tsquery of that one lexeme, quoted so that no character of it reads as an operator. The terms a
 * search ranks by are lexemes of the workspace's vectors (found in `workspace_terms`), so no parsing is needed.
 */
function tsqueryLexeme(term: string): string {
  return `'${term.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;
}

/** The terms of a chunk's search text (space-separated, as `codeSearchText` writes it). */
function termCount(searchText: string): number {
  return searchText.split(" ").filter((term) => term !== "").length;
}

function scoredChunk(row: Record<string, unknown>): ScoredChunk {
  return {
    chunkId: String(row.chunk_id),
    path: String(row.path),
    startLine: Number(row.start_line),
    endLine: Number(row.end_line),
    language: String(row.language),
    repo: row.repo === null ? null : String(row.repo),
    tags: row.tags as string[],
    metadata: row.metadata as Record<string, string>,
    text: String(row.text),
    contentHash: String(row.content_hash),
    score: Number(row.score),
  };
}

/** `BOOST_FACTOR` for each hint the chunk's document matches; never a filter. */
function boostFactor(boost: LexicalSearchInput["boost"]): SQL {
  const factors: SQL[] = [sql`1.0::float8`];
  if (boost.repo !== undefined) {
    factors.push(
      sql`(case when ${workspaceDocuments.repo} = ${boost.repo} then ${BOOST_FACTOR}::float8 else 1 end)`,
    );
  }
  if (boost.language !== undefined) {
    factors.push(
      sql`(case when ${workspaceDocuments.language} = ${boost.language} then ${BOOST_FACTOR}::float8 else 1 end)`,
    );
  }
  return sql.join(factors, sql` * `);
}

/**
 * The scope conditions, ANDed (docs/knowledge.md). `path`, `language` and `repo` are the document's columns (a
 * null repo is a missing key), `tag` tests membership in its tags whatever the operator's kind, and any other
 * key is looked up in its metadata, where a missing key is null. Values go in as one JSON array parameter.
 */
function scopeCondition(scope: readonly RagScopeCondition[]): SQL | undefined {
  return scope.length === 0 ? undefined : and(...scope.map(conditionSql));
}

function conditionSql(condition: RagScopeCondition): SQL {
  const values = sql`${JSON.stringify(condition.values)}::jsonb`;
  if (condition.key === "tag") {
    const member = sql`${workspaceDocuments.tags} ?| array(select jsonb_array_elements_text(${values}))`;
    return condition.operator === "==" || condition.operator === "contains" ? member : sql`not (${member})`;
  }
  const value = attributeOf(condition.key);
  const contains = sql`exists (select 1 from jsonb_array_elements_text(${values}) as part (value) where strpos(${value}, part.value) > 0)`;
  switch (condition.operator) {
    case "==":
      return sql`coalesce(${values} ? ${value}, false)`;
    case "!=":
      return sql`(${value} is null or not (${values} ? ${value}))`;
    case "contains":
      return sql`(${value} is not null and ${contains})`;
    case "does_not_contain":
      return sql`(${value} is null or not ${contains})`;
  }
}

function attributeOf(key: string): SQL {
  switch (key) {
    case "path":
      return sql`${workspaceDocuments.path}`;
    case "language":
      return sql`${workspaceDocuments.language}`;
    case "repo":
      return sql`${workspaceDocuments.repo}`;
    default:
      return sql`(${workspaceDocuments.metadata} ->> ${key})`;
  }
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
