import { setImmediate } from "node:timers/promises";
import { codeSearchText, type IndexDocumentInput, type WorkspaceKey } from "@aptix/core";
import { and, eq, inArray, type SQL, sql } from "drizzle-orm";
import {
  workspaceChunks,
  workspaceDocuments,
  workspaceEmbeddings,
  workspaces,
  workspaceTerms,
} from "../../schema.js";
import type { StoreDatabase, StoreTransaction } from "../rows.js";

/**
 * Rows per INSERT, and chunk text per INSERT (UTF-16 code units): well below Postgres's 65,535 parameters a
 * statement, and small enough that one statement, with the tsvectors and GIN entries it computes, takes tens of
 * milliseconds. On PGlite each statement runs on the event loop's thread, so its length is how long a request
 * such as `/healthz` waits.
 */
const DOCUMENT_BATCH = 1_000;
const CHUNK_BATCH = 50;
const CHUNK_BATCH_CHARS = 128 * 1024;

/** A document given with its chunks: one the index writes when its hash changed. */
export type ChunkedDocument = IndexDocumentInput & Required<Pick<IndexDocumentInput, "chunks">>;

/** The paths of `documents`, refusing one given twice: an upsert names each document once. */
export function distinctPaths(documents: readonly IndexDocumentInput[]): string[] {
  const paths = new Set<string>();
  for (const { path } of documents) {
    if (paths.has(path)) throw new RangeError(`documents: the path ${JSON.stringify(path)} is given twice`);
    paths.add(path);
  }
  return [...paths];
}

export function keyIs(key: WorkspaceKey): SQL {
  return and(eq(workspaces.principal, key.principal), eq(workspaces.workspaceId, key.workspaceId)) as SQL;
}

export function inPaths(paths: string[]): SQL {
  return paths.length === 0 ? sql`false` : inArray(workspaceDocuments.path, paths);
}

/** The workspace's row id; `lock` takes its row lock, so writes to one workspace take turns. */
export async function workspaceIdOf(
  db: StoreDatabase | StoreTransaction,
  key: WorkspaceKey,
  lock: boolean,
): Promise<number | undefined> {
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

export const NONE: Deleted = { documents: 0, chunks: 0, terms: 0 };

/**
 * Deletes the documents matching `where` with their chunks and embeddings (there are no cascading keys), and
 * takes their chunks out of the workspace's term frequencies unless `workspace` is undefined (when the whole
 * workspace goes). Leaves the workspace row's totals to the caller.
 */
export async function deleteDocuments(
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
export async function insertDocuments(
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

/** The terms of a chunk's search text (space-separated, as `codeSearchText` writes it). */
function termCount(searchText: string): number {
  return searchText.split(" ").filter((term) => term !== "").length;
}
