/** The storage quotas of a principal, by the setting that sets each. */
export type StorageQuota = "APTIX_QUOTA_FILE_BYTES" | "APTIX_QUOTA_WORKSPACE_BYTES";

const STORED: Record<StorageQuota, string> = {
  APTIX_QUOTA_FILE_BYTES: "files",
  APTIX_QUOTA_WORKSPACE_BYTES: "workspace documents",
};

/**
 * What a store throws when a write would take its principal past a storage quota (`FileStore.put`,
 * `WorkspaceIndex.upsertDocuments`): nothing of the write was stored. A server tool's call that meets it answers
 * the model with its message (the turn goes on); a workspace push answers 413 QUOTA_EXCEEDED.
 */
export class QuotaExceededError extends Error {
  override readonly name = "QuotaExceededError";

  constructor(
    /** The setting that sets the quota, named to whoever is refused. */
    readonly quota: StorageQuota,
    /** What the principal's stored data takes without this write. */
    readonly usedBytes: number,
    /** What this write would add. */
    readonly addedBytes: number,
    readonly quotaBytes: number,
  ) {
    super(
      `The principal's ${STORED[quota]} take ${usedBytes} bytes; ${addedBytes} more would pass the ${quotaBytes} bytes ${quota} allows, so nothing was stored.`,
    );
  }
}
