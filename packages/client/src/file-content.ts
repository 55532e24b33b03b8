/** The content behind a `FileRef.url` (`GET /v1/files/:fileId`). */
export interface FileContent {
  bytes: Uint8Array;
  /** The `content-type` the server sent, the file's `mimeType`. */
  contentType: string;
}
