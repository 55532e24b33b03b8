import type { Clock } from "../ports/clock.js";
import type { FileStore, StoredFile } from "../ports/file-store.js";
import { QuotaExceededError } from "../ports/quota-exceeded-error.js";
import { fileKeyOf, InMemorySessions } from "./in-memory-sessions.js";

/**
 * A `FileStore` in process memory. Files are kept per (principal, fileId): another principal's id answers
 * exactly as an unknown one does. A file is kept, expired or not, until `deleteExpired` finds its
 * `expiresAt <= clock.now()`. Metadata and content go in and come out as copies. Made over the state of
 * `inMemorySessionStores` (as its `files`), it shares one database with the session stores: a fork holds the
 * files of the turns it copies, and a deleted session's files go to a session that still holds them.
 */
export class InMemoryFileStore implements FileStore {
  readonly #shared: InMemorySessions;

  constructor(clock?: Clock, shared: InMemorySessions = new InMemorySessions(clock)) {
    this.#shared = shared;
  }

  async put(file: StoredFile, content: Uint8Array, limits: { quotaBytes?: number } = {}): Promise<void> {
    const name = fileKeyOf(file.principal, file.fileId);
    if (limits.quotaBytes !== undefined) {
      let used = 0;
      for (const [key, { file: kept }] of this.#shared.files) {
        if (kept.principal === file.principal && key !== name) used += kept.sizeBytes;
      }
      if (used + file.sizeBytes > limits.quotaBytes) {
        throw new QuotaExceededError("APTIX_QUOTA_FILE_BYTES", used, file.sizeBytes, limits.quotaBytes);
      }
    }
    this.#shared.files.set(name, {
      file: structuredClone(file),
      content: Uint8Array.from(content),
      heldBy: this.#shared.files.get(name)?.heldBy ?? new Set(),
    });
  }

  async get(
    principal: string,
    fileId: string,
  ): Promise<{ file: StoredFile; content: Uint8Array } | undefined> {
    const stored = this.#shared.files.get(fileKeyOf(principal, fileId));
    if (stored === undefined) return undefined;
    return { file: structuredClone(stored.file), content: Uint8Array.from(stored.content) };
  }

  /** Leaves a file whose producing session still exists: one a fork took over from a deleted session. */
  async deleteFiles(principal: string, fileIds: readonly string[]): Promise<void> {
    for (const fileId of fileIds) {
      const name = fileKeyOf(principal, fileId);
      const sessionId = this.#shared.files.get(name)?.file.producedBy?.sessionId;
      if (sessionId === undefined || !this.#shared.state({ principal, sessionId })) {
        this.#shared.files.delete(name);
      }
    }
  }

  async deleteExpired(limit: number): Promise<number> {
    const now = this.#shared.clock.now().getTime();
    let deleted = 0;
    for (const [key, { file }] of this.#shared.files) {
      if (deleted >= limit) break;
      if (file.expiresAt !== null && file.expiresAt.getTime() <= now) {
        this.#shared.files.delete(key);
        deleted++;
      }
    }
    return deleted;
  }
}
