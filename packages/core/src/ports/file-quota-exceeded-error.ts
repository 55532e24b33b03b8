/**
 * What `FileStore.put` throws when the file would take its principal's files past their quota: nothing was
 * stored. A server tool's call that meets it answers the model with its message (the turn goes on).
 */
export class FileQuotaExceededError extends Error {
  override readonly name = "FileQuotaExceededError";
  /** The setting that sets the quota, named to whoever is refused. */
  readonly quota = "APTIX_QUOTA_FILE_BYTES";

  constructor(
    readonly usedBytes: number,
    readonly fileBytes: number,
    readonly quotaBytes: number,
  ) {
    super(
      `The file quota is used up: this principal's files take ${usedBytes} bytes, and ${fileBytes} more would pass the ${quotaBytes} bytes APTIX_QUOTA_FILE_BYTES allows; the file was not kept.`,
    );
  }
}
