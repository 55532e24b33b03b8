import { type Clock, type FileStore, type StoredFile, systemClock } from "@aptix/core";
import { and, eq, inArray, lte, sql } from "drizzle-orm";
import type { StoreDatabase } from "./drizzle-session-store.js";
import { files } from "./schema.js";

/**
 * A `FileStore` on drizzle-orm, with the semantics of core's `InMemoryFileStore`: files are kept per
 * (principal, fileId), a second `put` of the same pair replaces the first, and a file is served, expired or
 * not, until `deleteExpired` finds its `expiresAt <= clock.now()`. One statement per call.
 */
export class DrizzleFileStore implements FileStore {
  readonly #db: StoreDatabase;
  readonly #clock: Clock;

  constructor(db: StoreDatabase, clock: Clock = systemClock) {
    this.#db = db;
    this.#clock = clock;
  }

  async put(file: StoredFile, content: Uint8Array): Promise<void> {
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
    };
    const { principal, fileId, ...replaced } = row;
    await this.#db
      .insert(files)
      .values(row)
      .onConflictDoUpdate({ target: [files.principal, files.fileId], set: replaced });
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
      },
      content: row.content,
    };
  }

  async deleteExpired(limit: number): Promise<number> {
    // Postgres has no DELETE … LIMIT: the batch is chosen by a sub-select on the primary key.
    const batch = this.#db
      .select({ principal: files.principal, fileId: files.fileId })
      .from(files)
      .where(lte(files.expiresAt, this.#clock.now()))
      .limit(limit);
    const deleted = await this.#db
      .delete(files)
      .where(inArray(sql`(${files.principal}, ${files.fileId})`, batch))
      .returning({ fileId: files.fileId });
    return deleted.length;
  }
}
