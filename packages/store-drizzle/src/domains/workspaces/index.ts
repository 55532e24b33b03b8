import {
  type ChunkEmbedding,
  type Clock,
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
import { and, eq, inArray, not, type SQL, sql } from "drizzle-orm";
import {
  workspaceChunks,
  workspaceDocuments,
  workspaceEmbeddings,
  workspaces,
  workspaceTerms,
} from "../../schema.js";
import type { StoreDatabase } from "../rows.js";
import {
  type ChunkedDocument,
  deleteDocuments,
  distinctPaths,
  inPaths,
  insertDocuments,
  keyIs,
  NONE,
  workspaceIdOf,
} from "./documents.js";
import { judgeWorkspaceQuota } from "./quota.js";
import { searchLexical, searchVector } from "./search.js";

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

  searchLexical(input: LexicalSearchInput): Promise<ScoredChunk[] | undefined> {
    return searchLexical(this.#db, input);
  }

  searchVector(input: VectorSearchInput): Promise<ScoredChunk[] | undefined> {
    return searchVector(this.#db, this.#vectorSchema, input);
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
}
