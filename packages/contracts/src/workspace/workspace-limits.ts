/** Bounds of the workspace routes (docs/http-api.md, Workspaces): the same for every server. */
export const WORKSPACE_LIMITS = Object.freeze({
  /** UTF-8 bytes of one pushed document's `contents`. */
  maxDocumentBytes: 1024 * 1024,
  /** Documents in one `PUT …/documents` (more is 413 PAYLOAD_TOO_LARGE), and paths in one `DELETE …/documents`. */
  maxDocumentsPerRequest: 1000,
  /** Bytes of one `PUT …/documents` body (more is 413 PAYLOAD_TOO_LARGE, while it streams in). */
  maxPushBytes: 16 * 1024 * 1024,
  maxTagsPerDocument: 64,
  maxTagChars: 256,
  maxMetadataEntries: 64,
  maxMetadataKeyChars: 128,
  maxMetadataValueChars: 1024,
  /** Characters of a search's `query`. */
  maxQueryChars: 10_000,
  /** Chunks a search answers when it names no `limit`, and the most it may ask for. */
  defaultSearchLimit: 8,
  maxSearchLimit: 50,
} as const);
