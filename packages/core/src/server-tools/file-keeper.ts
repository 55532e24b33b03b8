import type { FileRef } from "@aptix/contracts";
import type { Clock } from "../ports/clock.js";
import type { ContentHashService } from "../ports/content-hash-service.js";
import type { FileStore } from "../ports/file-store.js";
import type { IdGenerator } from "../ports/id-generator.js";
import type { ProducedFile } from "./server-tool.js";

/** Stores files that server tools produce and answers the FileRef clients fetch them by (AGN-033 §6). */
export interface FileKeeperOptions {
  store: FileStore;
  hashing: ContentHashService;
  ids: IdGenerator;
  clock: Clock;
}

export class FileKeeper {
  private readonly store: FileStore;
  private readonly hashing: ContentHashService;
  private readonly ids: IdGenerator;
  private readonly clock: Clock;

  constructor(options: FileKeeperOptions) {
    ({ store: this.store, hashing: this.hashing, ids: this.ids, clock: this.clock } = options);
  }

  async keep(principal: string, file: ProducedFile): Promise<FileRef> {
    const fileId = this.ids.newId("file");
    const contentHash = this.hashing.hash(file.content);
    await this.store.put(
      {
        fileId,
        principal,
        name: file.name,
        mimeType: file.mimeType,
        sizeBytes: file.content.byteLength,
        contentHash,
        createdAt: this.clock.now(),
        expiresAt: null,
      },
      file.content,
    );
    const ref: FileRef = {
      name: file.name,
      mimeType: file.mimeType,
      url: `/v1/files/${fileId}`,
      sizeBytes: file.content.byteLength,
      contentHash,
    };
    if (file.description !== undefined) ref.description = file.description;
    return ref;
  }
}
