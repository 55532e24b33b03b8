export interface StoredFile {
  fileId: string;
  principal: string;
  name: string;
  mimeType: string;
  sizeBytes: number;
  contentHash: string;
  createdAt: Date;
  expiresAt: Date | null;
}

/** Files the agent produces, served by reference (AGN-033 §6); only their owner can read them. */
export interface FileStore {
  /** Ids and hashes are minted by core; the store only keeps what it is given. */
  put(file: StoredFile, content: Uint8Array): Promise<void>;
  get(principal: string, fileId: string): Promise<{ file: StoredFile; content: Uint8Array } | undefined>;
}
