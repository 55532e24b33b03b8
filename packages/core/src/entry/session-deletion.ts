import { type InvokeResult, ok, type SessionDeleted } from "@aptix/contracts";
import type { TurnPersistence } from "../persistence/turn-persistence.js";
import type { FileStore } from "../ports/file-store.js";
import type { SessionDirectory } from "../ports/session-directory.js";
import type { TurnEventLog } from "../ports/turn-event-log.js";
import type { SessionKey, SessionRecord } from "../records/session-record.js";
import { sessionBusy, sessionNotFound } from "./entry-failures.js";
import { transactSession } from "./transact-session.js";

/** Where a produced file's id stands in its `FileRef.url` (FileKeeper mints `…/v1/files/<fileId>`). */
const FILE_URL = /\/v1\/files\/([^/?#]+)$/;

/**
 * `DELETE /v1/sessions/:sessionId`: the session and everything of it, refused SESSION_BUSY while a turn holds
 * its lease. The store deletes what it keeps in one step; an event log or file store apart from it is told next.
 */
export class SessionDeletion {
  constructor(
    private readonly persistence: TurnPersistence,
    private readonly directory: Pick<SessionDirectory, "listTurns" | "deleteSession">,
    private readonly files: FileStore,
    private readonly events: TurnEventLog,
    /** The provider that stored a session's responses and can delete them, if any. */
    private readonly responsesStoredBy: (session: SessionRecord) => string | undefined,
  ) {}

  delete(key: SessionKey): Promise<InvokeResult<SessionDeleted>> {
    const { persistence } = this;
    return transactSession(persistence, key, async () => {
      const session = await persistence.getSession(key);
      if (!session) return { type: "answer", answer: sessionNotFound(key.sessionId) };
      const turns = await this.directory.listTurns(key);
      const fileIds = turns.flatMap((turn) =>
        turn.files.flatMap((file) => FILE_URL.exec(file.url)?.slice(1, 2) ?? []),
      );
      const storedBy = this.responsesStoredBy(session);
      return {
        type: "delete",
        remove: () =>
          this.directory.deleteSession({
            key,
            expectVersion: session.version,
            fileIds,
            ...(storedBy === undefined ? {} : { responsesStoredBy: storedBy }),
          }),
        busy: sessionBusy(key.sessionId),
        deleted: async () => {
          await this.files.deleteFiles?.(key.principal, fileIds);
          await this.events.deleteSession?.(key);
          return ok({ deleted: true });
        },
      };
    });
  }
}
