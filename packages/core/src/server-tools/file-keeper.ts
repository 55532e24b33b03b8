import type { FileRef } from "@aptix/contracts";
import type { Clock } from "../ports/clock.js";
import type { ContentHashService } from "../ports/content-hash-service.js";
import type { FileStore } from "../ports/file-store.js";
import type { IdGenerator } from "../ports/id-generator.js";
import { QuotaExceededError } from "../ports/quota-exceeded-error.js";
import type { KeptFile, ProducedFile } from "../ports/server-tool.js";
import type { TurnKey } from "../records/session-record.js";
import { storable } from "../storable.js";
import { isMediaType, OPAQUE_MEDIA_TYPE } from "./media-type.js";

/** `files.ttlSeconds` when the configuration has none: a week. */
const DEFAULT_FILE_TTL_SECONDS = 604_800;
/** `files.maxBytes` when the configuration has none: 10 MiB, stored in the database beside the sessions. */
const DEFAULT_FILE_MAX_BYTES = 10 * 1024 * 1024;

/** Stores files that server tools produce and answers the FileRef clients fetch them by (AGN-033 §6). */
export interface FileKeeperOptions {
  store: FileStore;
  hashing: ContentHashService;
  ids: IdGenerator;
  clock: Clock;
  /**
   * Where clients reach the service (an origin, optionally with a path prefix): FileRef urls are absolute.
   * Empty: urls are relative to the service (`/v1/files/…`). A function is asked at every file (a server
   * learns its port only once it listens).
   */
  publicUrl?: string | (() => string);
  /** How long a file's content is served; `contentExpires` is its creation plus this. */
  ttlSeconds?: number;
  /** The largest file kept; a larger one is refused with FileTooLargeError. */
  maxBytes?: number;
  /**
   * The most bytes one principal's files may take together; a file that would pass it is refused with
   * QuotaExceededError (FileStore.put). Absent: no quota.
   */
  quotaBytes?: number;
}

/** A produced file larger than `files.maxBytes`: the tool decides whether the model or the turn hears of it. */
class FileTooLargeError extends Error {
  constructor(
    readonly fileName: string,
    readonly sizeBytes: number,
    readonly maxBytes: number,
  ) {
    super(
      `file ${JSON.stringify(fileName)} is ${sizeBytes} bytes, more than the ${maxBytes} bytes a file may have`,
    );
    this.name = "FileTooLargeError";
  }
}

export class FileKeeper {
  readonly maxBytes: number;
  private readonly store: FileStore;
  private readonly hashing: ContentHashService;
  private readonly ids: IdGenerator;
  private readonly clock: Clock;
  private readonly publicUrl: () => string;
  private readonly ttlMs: number;
  private readonly limits: { quotaBytes?: number };

  constructor(options: FileKeeperOptions) {
    ({ store: this.store, hashing: this.hashing, ids: this.ids, clock: this.clock } = options);
    const { publicUrl = "" } = options;
    this.publicUrl = typeof publicUrl === "string" ? () => publicUrl : publicUrl;
    this.ttlMs = (options.ttlSeconds ?? DEFAULT_FILE_TTL_SECONDS) * 1000;
    this.maxBytes = options.maxBytes ?? DEFAULT_FILE_MAX_BYTES;
    this.limits = options.quotaBytes === undefined ? {} : { quotaBytes: options.quotaBytes };
  }

  /** Keeps `file` for the turn `by` (whose principal owns it) and answers its FileRef. */
  async keep(by: TurnKey, file: ProducedFile): Promise<KeptFile> {
    const { principal } = by;
    const sizeBytes = file.content.byteLength;
    if (sizeBytes > this.maxBytes) throw new FileTooLargeError(file.name, sizeBytes, this.maxBytes);
    const fileId = this.ids.newId("file");
    const contentHash = this.hashing.hash(file.content);
    const createdAt = this.clock.now();
    const expiresAt = new Date(createdAt.getTime() + this.ttlMs);
    // An MCP server names its content's type itself: one that is no media type would become a broken header.
    const mimeType = isMediaType(file.mimeType) ? file.mimeType : OPAQUE_MEDIA_TYPE;
    // A name an MCP server gave is data like a model's text: a NUL in it would fail the write.
    const name = storable(file.name);
    try {
      await this.store.put(
        {
          fileId,
          principal,
          name,
          mimeType,
          sizeBytes,
          contentHash,
          createdAt,
          expiresAt,
          producedBy: { sessionId: by.sessionId, turnId: by.turnId },
        },
        file.content,
        this.limits,
      );
    } catch (error) {
      // A quota is the principal's and says so. Any other failure is the service's: what the store threw (a
      // driver's message, with the statement's parameters) must not reach the model or the client.
      if (error instanceof QuotaExceededError) throw error;
      throw new Error("the file could not be stored", { cause: error });
    }
    const ref: FileRef = {
      name,
      mimeType,
      url: `${this.publicUrl().replace(/\/+$/, "")}/v1/files/${fileId}`,
      sizeBytes,
      contentHash,
      contentExpires: expiresAt.toISOString(),
    };
    if (file.description !== undefined) ref.description = storable(file.description);
    return { fileId, ref };
  }
}
