import { fail, type InvokeResult, ok } from "@aptix/contracts";
import type { AgentCatalog } from "../catalog/agent-catalog.js";
import { contextWindowOf } from "../composition/context-window.js";
import { isIdentifier, type TurnPersistence } from "../persistence/turn-persistence.js";
import type { Clock } from "../ports/clock.js";
import type { FileStore, StoredFile } from "../ports/file-store.js";
import type { SessionStores } from "../ports/session-stores.js";
import type { UsageReports } from "../usage/usage-reports.js";
import { sessionNotFound, turnNotFound } from "./entry-failures.js";
import { type SessionSummary, summarizeSession, type TurnTrace, traceTurn } from "./views.js";

/** The owner-only reads the server's routes answer: a session, a turn's trace, a produced file. */
export class ReadModels {
  constructor(
    private readonly persistence: TurnPersistence,
    private readonly stores: Pick<SessionStores, "directory" | "transcripts">,
    private readonly catalog: Pick<AgentCatalog, "modes" | "conversationContext">,
    private readonly files: FileStore,
    private readonly clock: Clock,
    private readonly usage: UsageReports,
  ) {}

  async getSession(principal: string, sessionId: string): Promise<InvokeResult<SessionSummary>> {
    const key = { principal, sessionId };
    const session = await this.persistence.getSession(key);
    if (!session) return sessionNotFound(sessionId);
    const [turns, history, compactions, usage] = await Promise.all([
      this.stores.directory.listTurns(key),
      this.stores.directory.listModeHistory(key),
      this.stores.transcripts.listCompactions(key),
      this.usage.sessionUsage(key, session.createdAt),
    ]);
    const { modes } = this.catalog;
    const context = this.catalog.conversationContext(session.conversationContextId);
    return ok(
      summarizeSession({
        session,
        turns,
        history,
        compactions,
        usage,
        // A context since removed from the config: the window of a model nobody names.
        contextWindowTokens: contextWindowOf(context ?? { model: "" }).tokens,
        displayNameOf: (id) => (modes.has(id) ? modes.get(id).displayName : id),
      }),
    );
  }

  async getTurnTrace(principal: string, sessionId: string, turnId: string): Promise<InvokeResult<TurnTrace>> {
    const key = { principal, sessionId };
    const turn = await this.persistence.getTurn(key, turnId);
    if (!turn) return turnNotFound(key, turnId, !!(await this.persistence.getSession(key)));
    const calls = await this.stores.transcripts.listLlmCalls(key, turnId);
    return ok(traceTurn(turn, calls, this.usage.turnCostUsd(calls)));
  }

  async getFile(
    principal: string,
    fileId: string,
  ): Promise<InvokeResult<{ file: StoredFile; content: Uint8Array }>> {
    const found = isIdentifier(fileId) ? await this.files.get(principal, fileId) : undefined;
    if (!found || (await this.#ofAFailedTurn(found.file))) {
      return fail("FILE_NOT_FOUND", `No file ${JSON.stringify(fileId)}.`, { fileId });
    }
    const { expiresAt } = found.file;
    // Kept until the retention sweep, but no longer served: the client learns why rather than "unknown".
    if (expiresAt !== null && expiresAt.getTime() <= this.clock.now().getTime()) {
      return fail("FILE_EXPIRED", `File ${JSON.stringify(fileId)} expired at ${expiresAt.toISOString()}.`, {
        fileId,
        contentExpires: expiresAt.toISOString(),
      });
    }
    return ok(found);
  }

  /**
   * Whether the turn that produced `file` failed or was cancelled, or is gone: nothing of such a turn enters
   * the conversation, so its files answer as unknown ids do (and the sweep deletes them).
   */
  async #ofAFailedTurn({ principal, producedBy }: StoredFile): Promise<boolean> {
    if (producedBy === undefined) return false;
    const turn = await this.persistence.getTurn(
      { principal, sessionId: producedBy.sessionId },
      producedBy.turnId,
    );
    return turn === undefined || turn.status === "failed" || turn.status === "cancelled";
  }
}
