import { fail, IdentifierSchema, type InvokeFailure, type InvokeResult, ok } from "@aptix/contracts";
import type { Clock } from "../ports/clock.js";
import type { IdGenerator } from "../ports/id-generator.js";
import type { ClaimSessionInput, FindExpiredLeasesInput, SessionStore } from "../ports/session-store.js";
import type { ConversationCursor } from "../records/conversation-cursor.js";
import type { LlmCallRecord } from "../records/llm-call-record.js";
import type { ModeHistoryEntry } from "../records/mode-history-entry.js";
import type { SessionKey, SessionPatch, SessionRecord } from "../records/session-record.js";
import type { TranscriptItem } from "../records/transcript-item.js";
import type { TurnPatch, TurnRecord, TurnStatus } from "../records/turn-record.js";

/**
 * What a write answers once this instance has lost the session's lease (it ran past its lease, and another
 * request took the session over): the turn was interrupted here, and sending the request again gets whatever
 * the turn ended with.
 */
function leaseLost(): InvokeFailure {
  return fail(
    "TURN_INTERRUPTED",
    "This server instance lost the session's lease while the turn ran; another request took the session over.",
    { retryable: true },
  );
}

/**
 * Layer 5 — Persistence (AGN-027 F): the only layer that reads and writes sessions and turns. Reads are
 * open to anyone; writes go through a SessionLease, which exists only while this instance holds the
 * session's lease, so one turn runs per session across every instance.
 */
export interface TurnPersistenceOptions {
  store: SessionStore;
  clock: Clock;
  ids: IdGenerator;
  /** How long a claimed lease lasts before another instance may take the session over. */
  leaseMs: number;
}

export class TurnPersistence {
  private readonly store: SessionStore;
  private readonly clock: Clock;
  private readonly ids: IdGenerator;
  private readonly leaseMs: number;

  constructor(options: TurnPersistenceOptions) {
    ({ store: this.store, clock: this.clock, ids: this.ids, leaseMs: this.leaseMs } = options);
  }

  // An id that breaks the contracts' identifier rule (a NUL, which Postgres cannot even compare; an escape
  // left undecoded in a URL) names nothing: it is unknown without asking the store.
  getSession(key: SessionKey): Promise<SessionRecord | undefined> {
    if (!isIdentifier(key.sessionId)) return Promise.resolve(undefined);
    return this.store.getSession(key);
  }

  getTurn(key: SessionKey, turnId: string): Promise<TurnRecord | undefined> {
    if (!isIdentifier(key.sessionId) || !isIdentifier(turnId)) return Promise.resolve(undefined);
    return this.store.getTurn(key, turnId);
  }

  listTurns(key: SessionKey): Promise<TurnRecord[]> {
    return this.store.listTurns(key);
  }

  listModeHistory(key: SessionKey): Promise<ModeHistoryEntry[]> {
    return this.store.listModeHistory(key);
  }

  listLlmCalls(key: SessionKey, turnId: string): Promise<LlmCallRecord[]> {
    return this.store.listLlmCalls(key, turnId);
  }

  findExpiredLeases(input: FindExpiredLeasesInput): Promise<SessionKey[]> {
    return this.store.findExpiredLeases(input);
  }

  /** Takes the session's lease (creating the session first when `create` is given). */
  async claim(
    key: SessionKey,
    create?: ClaimSessionInput["create"],
  ): Promise<InvokeResult<{ session: SessionRecord; lease: SessionLease }>> {
    const owner = this.ids.newId("lease");
    const claimed = await this.store.claimSession({
      key,
      lease: { owner, durationMs: this.leaseMs },
      now: this.clock.now(),
      ...(create ? { create } : {}),
    });
    if (claimed.outcome === "busy") {
      return fail("SESSION_BUSY", "Another turn of this session is running; retry when it has finished.", {
        sessionId: key.sessionId,
      });
    }
    if (claimed.outcome === "not_found") {
      return fail("SESSION_NOT_FOUND", `No session ${JSON.stringify(key.sessionId)}.`, {
        sessionId: key.sessionId,
      });
    }
    return ok({
      session: claimed.session,
      lease: new SessionLease({ store: this.store, key, owner, leaseMs: this.leaseMs }),
    });
  }
}

/** Writes of one turn execution, valid while its lease holds. Each answers TURN_INTERRUPTED when the lease was lost. */
export class SessionLease {
  private readonly store: SessionStore;
  readonly key: SessionKey;
  readonly owner: string;
  private readonly leaseMs: number;

  constructor(options: { store: SessionStore; key: SessionKey; owner: string; leaseMs: number }) {
    ({ store: this.store, key: this.key, owner: this.owner, leaseMs: this.leaseMs } = options);
  }

  async startTurn(
    turn: TurnRecord,
    sessionPatch: SessionPatch,
    abandonTurnId?: string,
  ): Promise<InvokeResult<void>> {
    const started = await this.store.startTurn({
      turn,
      sessionPatch,
      leaseOwner: this.owner,
      ...(abandonTurnId ? { abandonTurnId } : {}),
    });
    if (started === "turn_exists") {
      return fail("TURN_ID_CONFLICT", `Turn ${JSON.stringify(turn.turnId)} already exists in this session.`, {
        turnId: turn.turnId,
      });
    }
    return started === "started" ? ok(undefined) : leaseLost();
  }

  /** Changes the turn and the session together; `expectStatus` makes it a conditional transition. */
  async updateTurn(
    turnId: string,
    turnPatch: TurnPatch,
    options: { sessionPatch?: SessionPatch; expectStatus?: TurnStatus; release?: boolean } = {},
  ): Promise<InvokeResult<void>> {
    const updated = await this.store.updateTurn({
      key: this.key,
      turnId,
      turnPatch,
      leaseOwner: this.owner,
      ...(options.sessionPatch ? { sessionPatch: options.sessionPatch } : {}),
      ...(options.expectStatus ? { expectStatus: options.expectStatus } : {}),
      ...(options.release ? { releaseLease: true } : {}),
    });
    return updated ? ok(undefined) : leaseLost();
  }

  /** Ends the lease without touching a turn: for requests that fail before their turn starts. */
  release(): Promise<void> {
    return this.store.releaseLease(this.key, this.owner);
  }

  /** Keeps the call's trace; after a success, also the transcript items it added and the new cursor. */
  async recordLlmCall(
    call: LlmCallRecord,
    progress?: { items: TranscriptItem[]; fromPosition: number; cursor: ConversationCursor },
  ): Promise<InvokeResult<void>> {
    const recorded = await this.store.recordLlmCall({
      call,
      lease: { owner: this.owner, durationMs: this.leaseMs },
      ...(progress ? { progress } : {}),
    });
    return recorded ? ok(undefined) : leaseLost();
  }

  loadTranscript(length: number): Promise<TranscriptItem[]> {
    return this.store.loadTranscript(this.key, length);
  }

  async changeMode(entry: ModeHistoryEntry): Promise<InvokeResult<void>> {
    return (await this.store.changeMode(entry, this.owner)) ? ok(undefined) : leaseLost();
  }
}

/** Whether `id` follows the identifier rule every id a client or core mints follows (`file_…` included). */
export function isIdentifier(id: string): boolean {
  return IdentifierSchema.safeParse(id).success;
}
