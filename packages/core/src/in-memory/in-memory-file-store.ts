import { systemClock } from "../defaults/system-clock.js";
import type { Clock } from "../ports/clock.js";
import type { FileStore, StoredFile } from "../ports/file-store.js";
import { QuotaExceededError } from "../ports/quota-exceeded-error.js";

/**
 * A `FileStore` in process memory. Files are kept per (principal, fileId): another principal's id answers
 * exactly as an unknown one does. A file is kept, expired or not, until `deleteExpired` finds its
 * `expiresAt <= clock.now()`. Metadata and content go in and come out as copies.
 */
export class InMemoryFileStore implements FileStore {
  readonly #files = new Map<string, { file: StoredFile; content: Uint8Array }>();
  readonly #clock: Clock;

  constructor(clock: Clock = systemClock) {
    this.#clock = clock;
  }

  async put(file: StoredFile, content: Uint8Array, limits: { quotaBytes?: number } = {}): Promise<void> {
    if (limits.quotaBytes !== undefined) {
      let used = 0;
      for (const [key, { file: kept }] of this.#files) {
        if (kept.principal === file.principal && key !== keyOf(file.principal, file.fileId)) {
          used += kept.sizeBytes;
        }
      }
      if (used + file.sizeBytes > limits.quotaBytes) {
        throw new QuotaExceededError("APTIX_QUOTA_FILE_BYTES", used, file.sizeBytes, limits.quotaBytes);
      }
    }
    this.#files.set(keyOf(file.principal, file.fileId), {
      file: structuredClone(file),
      content: Uint8Array.from(content),
    });
  }

  async get(
    principal: string,
    fileId: string,
  ): Promise<{ file: StoredFile; content: Uint8Array } | undefined> {
    const stored = this.#files.get(keyOf(principal, fileId));
    if (stored === undefined) return undefined;
    return { file: structuredClone(stored.file), content: Uint8Array.from(stored.content) };
  }

  async deleteFiles(principal: string, fileIds: readonly string[]): Promise<void> {
    for (const fileId of fileIds) this.#files.delete(keyOf(principal, fileId));
  }

  async deleteExpired(limit: number): Promise<number> {
    const now = this.#clock.now().getTime();
    let deleted = 0;
    for (const [key, { file }] of this.#files) {
      if (deleted >= limit) break;
      if (file.expiresAt !== null && file.expiresAt.getTime() <= now) {
        this.#files.delete(key);
        deleted++;
      }
    }
    return deleted;
  }
}

function keyOf(principal: string, fileId: string): string {
  return JSON.stringify([principal, fileId]);
}
