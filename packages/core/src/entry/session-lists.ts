import {
  fail,
  IdentifierSchema,
  type InvokeFailure,
  type InvokeResult,
  ok,
  type SessionList,
  type SessionMessages,
} from "@aptix/contracts";
import type { ModeCatalog } from "../catalog/mode-catalog.js";
import { isSuperseded } from "../lifecycle/turn-lifecycle.js";
import type { TurnPersistence } from "../persistence/turn-persistence.js";
import type { SessionDirectory, SessionListing } from "../ports/session-directory.js";
import { sessionTitle } from "../records/session-title.js";
import { sessionNotFound } from "./entry-failures.js";
import { turnMessages } from "./session-messages.js";

export interface PageRequest {
  /** 1–100 (the route checks it). */
  limit: number;
  /** A `nextCursor` this service answered. */
  cursor?: string;
}

/**
 * The owner's pages of sessions and of a session's messages (`GET /v1/sessions`, `…/messages`). A session's
 * cursor is its `updatedAt` in milliseconds and its id (`<ms>.<sessionId>`), a message's its position in the
 * conversation (two per turn, from 0).
 */
export class SessionLists {
  constructor(
    private readonly persistence: TurnPersistence,
    private readonly directory: Pick<SessionDirectory, "listSessions" | "listMessageTurns">,
    private readonly modes: ModeCatalog,
  ) {}

  async listSessions(
    principal: string,
    page: PageRequest & { workspaceId?: string; q?: string },
  ): Promise<InvokeResult<SessionList>> {
    let after: { updatedAt: Date; sessionId: string } | undefined;
    if (page.cursor !== undefined) {
      const match = /^(\d{1,15})\.(.+)$/.exec(page.cursor);
      const updatedAt = Number(match?.[1]);
      // A time no session can have (past the year 9999), or an id no session can have (a NUL, which the store
      // cannot even compare), is no cursor this service answered.
      if (!match || updatedAt > LATEST_CURSOR_MS || !IdentifierSchema.safeParse(match[2]).success) {
        return badCursor();
      }
      after = { updatedAt: new Date(updatedAt), sessionId: match[2] as string };
    }
    const listings = await this.directory.listSessions({
      principal,
      limit: page.limit + 1,
      ...(page.workspaceId === undefined ? {} : { workspaceId: page.workspaceId }),
      ...(page.q === undefined ? {} : { titleContains: page.q }),
      ...(after ? { after } : {}),
    });
    const shown = listings.slice(0, page.limit);
    const last = shown.at(-1);
    return ok({
      sessions: shown.map((listing) => this.#item(listing)),
      ...(listings.length > page.limit && last
        ? { nextCursor: `${last.updatedAt.getTime()}.${last.sessionId}` }
        : {}),
    });
  }

  async listMessages(
    principal: string,
    sessionId: string,
    page: PageRequest & { includeSuperseded?: boolean },
  ): Promise<InvokeResult<SessionMessages>> {
    let from = 0;
    if (page.cursor !== undefined) {
      if (!/^\d{1,9}$/.test(page.cursor)) return badCursor();
      from = Number(page.cursor);
    }
    const key = { principal, sessionId };
    const session = await this.persistence.getSession(key);
    if (!session) return sessionNotFound(sessionId);
    // Two messages a turn: from the turn of message `from`, enough turns for `limit` messages and one more.
    const skip = from % 2;
    const turnCount = Math.ceil((skip + page.limit + 1) / 2);
    const turns = await this.directory.listMessageTurns(key, Math.floor(from / 2) + 1, turnCount);
    const messages = turns.flatMap(turnMessages).slice(skip);
    const shown = messages.slice(0, page.limit);
    // Positions count every turn, so a cursor holds whichever turns a page leaves out.
    const superseded = new Set(turns.filter((turn) => isSuperseded(turn.status)).map((turn) => turn.turnId));
    return ok({
      messages: page.includeSuperseded ? shown : shown.filter((message) => !superseded.has(message.turnId)),
      ...(messages.length > page.limit ? { nextCursor: String(from + page.limit) } : {}),
    });
  }

  #item({
    sessionId,
    mode,
    turnCount,
    createdAt,
    updatedAt,
    lastTurnStatus,
    firstInstruction,
    workspaceId,
  }: SessionListing): SessionList["sessions"][number] {
    return {
      sessionId,
      modeDisplayName: this.modes.has(mode) ? this.modes.get(mode).displayName : mode,
      turnCount,
      ...(lastTurnStatus === undefined ? {} : { lastTurnStatus }),
      ...(workspaceId === undefined ? {} : { workspaceId }),
      createdAt,
      updatedAt,
      title: sessionTitle(firstInstruction),
    };
  }
}

/** 9999-12-31T23:59:59.999Z: the latest time a session cursor can name. */
const LATEST_CURSOR_MS = 253_402_300_799_999;

function badCursor(): InvokeFailure {
  return fail("VALIDATION_FAILED", "cursor is not a nextCursor this service answered.", {
    fields: [{ path: "cursor", message: "must be a nextCursor this service answered" }],
  });
}
