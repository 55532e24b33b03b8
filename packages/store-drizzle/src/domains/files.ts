import { type Clock, type FileStore, QuotaExceededError, type StoredFile, systemClock } from "@aptix/core";
import { and, eq, inArray, lte, ne, type SQLWrapper, sql } from "drizzle-orm";
import { rowsOf } from "../rows-of.js";
import { fileHolders, files, turns } from "../schema.js";
import type { StoreDatabase } from "./rows.js";

/** First key of the advisory lock that makes one principal's quota-checked puts take turns ("AptF"). */
const FILE_QUOTA_LOCK_CLASS = 0x41707446;

/**
 * A `FileStore` on drizzle-orm, with the semantics of core's `InMemoryFileStore`: files are kept per
 * (principal, fileId), a second `put` of the same pair replaces the first, and a file is served, expired or
 * not, until `deleteExpired` finds its `expiresAt <= clock.now()`. One statement per call, but a put with a
 * quota: a transaction that takes the principal's advisory lock, sums its files' sizes, then writes, so two
 * puts of one principal cannot each count without the other's file.
 */
export class DrizzleFileStore implements FileStore {
  readonly #db: StoreDatabase;
  readonly #clock: Clock;

  constructor(db: StoreDatabase, clock: Clock = systemClock) {
    this.#db = db;
    this.#clock = clock;
  }

  async put(file: StoredFile, content: Uint8Array, limits: { quotaBytes?: number } = {}): Promise<void> {
    const row = {
      principal: file.principal,
      fileId: file.fileId,
      name: file.name,
      mimeType: file.mimeType,
      sizeBytes: file.sizeBytes,
      contentHash: file.contentHash,
      content,
      createdAt: new Date(file.createdAt),
      expiresAt: file.expiresAt === null ? null : new Date(file.expiresAt),
      sessionId: file.producedBy?.sessionId ?? null,
      turnId: file.producedBy?.turnId ?? null,
    };
    const { principal, fileId, ...replaced } = row;
    const { quotaBytes } = limits;
    const write = (db: Pick<StoreDatabase, "insert">) =>
      db
        .insert(files)
        .values(row)
        .onConflictDoUpdate({ target: [files.principal, files.fileId], set: replaced });
    if (quotaBytes === undefined) {
      await write(this.#db);
      return;
    }
    await this.#db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(${FILE_QUOTA_LOCK_CLASS}, hashtext(${principal}))`);
      const [used] = await tx
        .select({ bytes: sql<string>`coalesce(sum(${files.sizeBytes}), 0)` })
        .from(files)
        .where(and(eq(files.principal, principal), ne(files.fileId, fileId)));
      const usedBytes = Number(used?.bytes ?? 0);
      if (usedBytes + file.sizeBytes > quotaBytes) {
        throw new QuotaExceededError("APTIX_QUOTA_FILE_BYTES", usedBytes, file.sizeBytes, quotaBytes);
      }
      await write(tx);
    });
  }

  async get(
    principal: string,
    fileId: string,
  ): Promise<{ file: StoredFile; content: Uint8Array } | undefined> {
    const [row] = await this.#db
      .select()
      .from(files)
      .where(and(eq(files.principal, principal), eq(files.fileId, fileId)))
      .limit(1);
    if (row === undefined) return undefined;
    return {
      file: {
        fileId: row.fileId,
        principal: row.principal,
        name: row.name,
        mimeType: row.mimeType,
        sizeBytes: row.sizeBytes,
        contentHash: row.contentHash,
        createdAt: row.createdAt,
        expiresAt: row.expiresAt,
        ...(row.sessionId === null || row.turnId === null
          ? {}
          : { producedBy: { sessionId: row.sessionId, turnId: row.turnId } }),
      },
      content: row.content,
    };
  }

  async deleteExpired(limit: number): Promise<number> {
    const batch = this.#db
      .select({ principal: files.principal, fileId: files.fileId })
      .from(files)
      .where(lte(files.expiresAt, this.#clock.now()))
      .limit(limit);
    return this.#deleteBatch(batch);
  }

  /** The files of failed or cancelled turns (never an interrupted one's, whose round may run again). */
  async deleteFilesOfFailedTurns(limit: number): Promise<number> {
    const batch = this.#db
      .select({ principal: files.principal, fileId: files.fileId })
      .from(files)
      .innerJoin(
        turns,
        and(
          eq(turns.principal, files.principal),
          eq(turns.sessionId, files.sessionId),
          eq(turns.turnId, files.turnId),
        ),
      )
      .where(
        and(
          inArray(turns.status, ["failed", "cancelled"]),
          sql`coalesce(${turns.error} ->> 'code', '') <> 'TURN_INTERRUPTED'`,
        ),
      )
      .limit(limit);
    return this.#deleteBatch(batch);
  }

  /**
   * Deletes the files a select of (principal, fileId) names, and the sessions' holdings of them, in one
   * statement: Postgres has no DELETE … LIMIT.
   */
  async #deleteBatch(batch: SQLWrapper): Promise<number> {
    const result = await this.#db.execute(sql`with deleted as (
        delete from ${files} where (${files.principal}, ${files.fileId}) in (${batch})
        returning ${files.principal}, ${files.fileId}
      ), released as (
        delete from ${fileHolders} h using deleted
        where h.principal = deleted.principal and h.file_id = deleted.file_id
      )
      select count(*)::int as deleted from deleted`);
    return Number(rowsOf(result)[0]?.deleted ?? 0);
  }
}
