export interface StoredFile {
  fileId: string;
  principal: string;
  name: string;
  mimeType: string;
  sizeBytes: number;
  contentHash: string;
  createdAt: Date;
  /** When the content stops being served (`FileRef.contentExpires`); null: never. */
  expiresAt: Date | null;
  /**
   * The turn whose server tool produced it: served only while that turn has not failed or been cancelled
   * (docs/security.md, delete means gone), and deleted with its session. Absent for files kept otherwise. When
   * that session is deleted while a fork of it holds the file, the fork's copy of the turn (same id) takes over.
   */
  producedBy?: { sessionId: string; turnId: string };
}

/** Files the agent produces, served by reference (AGN-033 §6); only their owner can read them. */
export interface FileStore {
  /**
   * Ids and hashes are minted by core; the store only keeps what it is given. With `quotaBytes`, the file is
   * kept only if the principal's files (a file of the same id replaced, expired files not swept yet counted)
   * take no more than that with it; otherwise nothing is stored and QuotaExceededError is thrown. The sum
   * and the write are one atomic step: concurrent puts of one principal cannot pass the quota together.
   */
  put(file: StoredFile, content: Uint8Array, limits?: { quotaBytes?: number }): Promise<void>;
  /** The file until it is deleted, expired or not: readers judge `expiresAt` (an expired file is 410, not 404). */
  get(principal: string, fileId: string): Promise<{ file: StoredFile; content: Uint8Array } | undefined>;
  /**
   * The retention sweep: deletes up to `limit` files whose `expiresAt <= now` (by the store's clock) and
   * answers how many it deleted.
   */
  deleteExpired(limit: number): Promise<number>;
  /**
   * Deletes the principal's files of these ids: a deleted session's, but for those a session that still exists
   * produced or took over from it. A store that shares one database with the session store may leave it out,
   * since `SessionDirectory.deleteSession` deletes them in its own transaction.
   */
  deleteFiles?(principal: string, fileIds: readonly string[]): Promise<void>;
  /**
   * The sweep of files no one may read: deletes up to `limit` files whose producing turn failed or was
   * cancelled (but for one interrupted, whose round may run again), and answers how many. Only a store that
   * shares one database with the session store can tell; others leave them to `deleteExpired`.
   */
  deleteFilesOfFailedTurns?(limit: number): Promise<number>;
}
