import { systemClock } from "../defaults/system-clock.js";
import type { Clock } from "../ports/clock.js";
import type {
  BeginTurnInput,
  BeginTurnResult,
  ClaimSessionInput,
  ClaimSessionResult,
  FindExpiredLeasesInput,
  LlmCallWrite,
  RecordLlmCallInput,
  ResumeTurnInput,
  ResumeTurnResult,
  SessionStore,
  StartTurnInput,
  UpdateTurnInput,
} from "../ports/session-store.js";
import { EMPTY_CURSOR } from "../records/conversation-cursor.js";
import type { LlmCallRecord } from "../records/llm-call-record.js";
import type { ModeHistoryEntry } from "../records/mode-history-entry.js";
import type { SessionKey, SessionPatch, SessionRecord } from "../records/session-record.js";
import type { TranscriptItem } from "../records/transcript-item.js";
import type { TurnPatch, TurnRecord } from "../records/turn-record.js";

/** The fields a `SessionPatch` may set; any other key of a patch object is ignored, as a SQL store would. */
const SESSION_PATCH_KEYS = [
  "mode",
  "solutionContextText",
  "cursor",
  "openTurnId",
] as const satisfies readonly (keyof SessionPatch)[];

/** The fields a `TurnPatch` may set. */
const TURN_PATCH_KEYS = [
  "status",
  "rounds",
  "pending",
  "toolExecutions",
  "files",
  "usage",
  "llmCallCount",
  "error",
  "completedAt",
] as const satisfies readonly (keyof TurnPatch)[];

/** Everything kept for one (principal, sessionId). */
interface SessionState {
  record: SessionRecord;
  /** Null when no lease is held (never claimed, or released). */
  lease: { owner: string; expiresAt: Date } | null;
  /** Transcript items by position; a map, like rows keyed by position, so a write past the end leaves a gap. */
  transcript: Map<number, TranscriptItem>;
  turns: Map<string, TurnRecord>;
  /** LLM call traces by turn id, in the order they were recorded. */
  calls: Map<string, LlmCallRecord[]>;
  modeHistory: ModeHistoryEntry[];
}

/**
 * A `SessionStore` in process memory, for tests and single-process development. It defines the semantics
 * that `describeSessionStoreContract` checks and every durable store must share:
 *
 * - Records go in and come out as copies (`structuredClone`): callers never hold live references, and
 *   `Date`s stay `Date`s.
 * - The clock given to the constructor is the store's clock, as a database's `now()` is a SQL store's: a lease
 *   lasts its `durationMs` from the clock's now when claimed or renewed, and it alone judges expiry; no time a
 *   caller passes does. A lease is free when none is held or it has expired (`expiresAt <= now`); a held,
 *   unexpired lease makes a claim `busy`, even for the same owner string.
 * - Lease-guarded writes check only that the session's lease owner is the given owner: a holder may keep
 *   writing after its lease expired, until another claimant takes the lease. `releaseLease` (and
 *   `updateTurn`'s `releaseLease`) leave no lease held; a release by anyone else is a no-op.
 * - Patches apply only the keys they define with a value other than `undefined` (`null` is a value).
 * - `session.updatedAt` follows writes to the session row: `turn.createdAt` on `startTurn`, the clock on
 *   `updateTurn` with a session patch and on `recordLlmCall` with progress, `entry.changedAt` on `changeMode`.
 *
 * Every method is synchronous under its `async` signature, so each is atomic with respect to the others.
 */
export class InMemorySessionStore implements SessionStore {
  readonly #sessions = new Map<string, SessionState>();
  readonly #clock: Clock;

  /** `clock` is the store's clock: it judges leases and stamps `updatedAt` on writes that are not given a time. */
  constructor(clock: Clock = systemClock) {
    this.#clock = clock;
  }

  async getSession(key: SessionKey): Promise<SessionRecord | undefined> {
    const state = this.#state(key);
    return state === undefined ? undefined : copy(state.record);
  }

  async getTurn(key: SessionKey, turnId: string): Promise<TurnRecord | undefined> {
    const turn = this.#state(key)?.turns.get(turnId);
    return turn === undefined ? undefined : copy(turn);
  }

  async claimSession({ key, lease, now, create, turnId }: ClaimSessionInput): Promise<ClaimSessionResult> {
    let state = this.#state(key);
    if (state === undefined) {
      if (create === undefined) return { outcome: "not_found" };
      state = {
        record: {
          principal: key.principal,
          sessionId: key.sessionId,
          conversationContextId: create.conversationContextId,
          agentContextId: create.agentContextId,
          mode: create.mode,
          solutionContextText: null,
          cursor: copy(EMPTY_CURSOR),
          openTurnId: null,
          turnCount: 0,
          createdAt: new Date(now),
          updatedAt: new Date(now),
        },
        lease: null,
        transcript: new Map(),
        turns: new Map(),
        calls: new Map(),
        modeHistory: [],
      };
      this.#sessions.set(keyOf(key), state);
    }
    if (this.#busy(state)) return { outcome: "busy" };
    state.lease = this.#lease(lease.owner, lease.durationMs);
    const turn = turnId === undefined ? undefined : state.turns.get(turnId);
    return { outcome: "claimed", session: copy(state.record), ...(turn ? { turn: copy(turn) } : {}) };
  }

  async beginTurn(input: BeginTurnInput): Promise<BeginTurnResult> {
    const existing = this.#state(input.key)?.turns.get(input.turnId);
    if (existing !== undefined) return { outcome: "turn_exists", turn: copy(existing) };
    if (this.#atRunningCap(input.key.principal, input.maxRunningTurns)) return { outcome: "rate_limited" };
    const { turnId: _, plan, maxRunningTurns: __, ...claim } = input;
    const claimed = await this.claimSession(claim);
    if (claimed.outcome !== "claimed") return claimed;
    const start = plan(claimed.session);
    if (start === undefined) return claimed;
    const started = await this.startTurn({ ...start, leaseOwner: input.lease.owner });
    if (started !== "started") return claimed;
    const session = this.#state(input.key)?.record;
    return { outcome: "started", session: copy(session as SessionRecord), turn: copy(start.turn) };
  }

  async resumeTurn(input: ResumeTurnInput): Promise<ResumeTurnResult> {
    const { key, lease, turnId, plan } = input;
    const state = this.#state(key);
    const turn = state?.turns.get(turnId);
    if (state === undefined || turn === undefined) return { outcome: "not_found" };
    if (this.#atRunningCap(key.principal, input.maxRunningTurns))
      return { outcome: "rate_limited", turn: copy(turn) };
    if (this.#busy(state)) return { outcome: "busy", turn: copy(turn) };
    const patch = plan(copy(state.record), copy(turn));
    if (patch === undefined) return { outcome: "declined", turn: copy(turn) };
    state.lease = this.#lease(lease.owner, lease.durationMs);
    this.#patchTurn(turn, patch);
    return { outcome: "resumed", session: copy(state.record), turn: copy(turn) };
  }

  async releaseLease(key: SessionKey, owner: string): Promise<void> {
    const state = this.#leased(key, owner);
    if (state !== undefined) state.lease = null;
  }

  async startTurn({
    turn,
    sessionPatch,
    abandonTurnId,
    leaseOwner,
  }: StartTurnInput): Promise<"started" | "turn_exists" | "lease_lost"> {
    const state = this.#leased(turn, leaseOwner);
    if (state === undefined) return "lease_lost";
    if (state.turns.has(turn.turnId)) return "turn_exists";
    const stored = copy(turn);
    const patch = copy(sessionPatch);
    state.turns.set(stored.turnId, stored);
    const abandoned = abandonTurnId === undefined ? undefined : state.turns.get(abandonTurnId);
    if (abandoned !== undefined) {
      abandoned.status = "abandoned";
      abandoned.pending = null;
      abandoned.updatedAt = new Date(turn.createdAt);
      abandoned.completedAt = new Date(turn.createdAt);
    }
    applySessionPatch(state.record, patch);
    state.record.turnCount += 1;
    state.record.updatedAt = new Date(turn.createdAt);
    return "started";
  }

  async updateTurn({
    key,
    turnId,
    expectStatus,
    turnPatch,
    sessionPatch,
    leaseOwner,
    releaseLease,
    llmCalls = [],
  }: UpdateTurnInput): Promise<boolean> {
    const state = this.#leased(key, leaseOwner);
    const turn = state?.turns.get(turnId);
    if (state === undefined || turn === undefined) return false;
    if (expectStatus !== undefined && turn.status !== expectStatus) return false;
    for (const write of llmCalls) this.#keepCall(state, write);
    const now = this.#clock.now();
    const sPatch = sessionPatch === undefined ? undefined : copy(sessionPatch);
    this.#patchTurn(turn, turnPatch);
    if (sPatch !== undefined) {
      applySessionPatch(state.record, sPatch);
      state.record.updatedAt = new Date(now);
    }
    if (releaseLease === true) state.lease = null;
    return true;
  }

  async recordLlmCall({ call, progress, lease }: RecordLlmCallInput): Promise<boolean> {
    const state = this.#leased(call, lease.owner);
    if (state === undefined) return false;
    this.#keepCall(state, progress === undefined ? { call } : { call, progress });
    state.lease = this.#lease(lease.owner, lease.durationMs);
    return true;
  }

  /** Applies a copy of `patch` to the stored `turn`, stamped now. */
  #patchTurn(turn: TurnRecord, patch: TurnPatch): void {
    const copied = copy(patch);
    for (const field of TURN_PATCH_KEYS) {
      if (copied[field] !== undefined) Object.assign(turn, { [field]: copied[field] });
    }
    turn.updatedAt = new Date(this.#clock.now());
  }

  /** Whether the session's lease is held: taken, and not expired by the store's clock. */
  #busy(state: SessionState): boolean {
    return state.lease !== null && state.lease.expiresAt.getTime() > this.#clock.now().getTime();
  }

  /** Whether `principal` runs `max` turns or more: turns `running` whose session's lease is held. */
  #atRunningCap(principal: string, max: number | undefined): boolean {
    if (max === undefined) return false;
    let running = 0;
    for (const state of this.#sessions.values()) {
      const open = state.record.openTurnId === null ? undefined : state.turns.get(state.record.openTurnId);
      if (state.record.principal === principal && open?.status === "running" && this.#busy(state)) running++;
    }
    return running >= max;
  }

  /** Keeps a call's trace (replacing one of the same index) and its transcript progress. */
  #keepCall(state: SessionState, write: LlmCallWrite): void {
    const stored = copy(write.call);
    const written = write.progress === undefined ? undefined : copy(write.progress);
    const calls = (state.calls.get(stored.turnId) ?? []).filter((kept) => kept.index !== stored.index);
    state.calls.set(stored.turnId, [...calls, stored]);
    if (written !== undefined) {
      for (const position of [...state.transcript.keys()]) {
        if (position >= written.fromPosition) state.transcript.delete(position);
      }
      written.items.forEach((item, offset) => {
        state.transcript.set(written.fromPosition + offset, item);
      });
      state.record.cursor = written.cursor;
      state.record.updatedAt = this.#clock.now();
    }
  }

  async changeMode(entry: ModeHistoryEntry, leaseOwner: string): Promise<boolean> {
    const state = this.#leased(entry, leaseOwner);
    if (state === undefined) return false;
    const stored = copy(entry);
    state.record.mode = stored.newMode;
    state.record.updatedAt = new Date(stored.changedAt);
    state.modeHistory.push(stored);
    return true;
  }

  async loadTranscript(key: SessionKey, length: number): Promise<TranscriptItem[]> {
    const state = this.#state(key);
    if (state === undefined) return [];
    return [...state.transcript.entries()]
      .filter(([position]) => position < length)
      .sort(([a], [b]) => a - b)
      .map(([, item]) => copy(item));
  }

  async listTurns(key: SessionKey): Promise<TurnRecord[]> {
    const state = this.#state(key);
    if (state === undefined) return [];
    return [...state.turns.values()].sort((a, b) => a.sequence - b.sequence).map(copy);
  }

  async listModeHistory(key: SessionKey): Promise<ModeHistoryEntry[]> {
    return (this.#state(key)?.modeHistory ?? []).map(copy);
  }

  async listLlmCalls(key: SessionKey, turnId: string): Promise<LlmCallRecord[]> {
    const calls = this.#state(key)?.calls.get(turnId) ?? [];
    return [...calls].sort((a, b) => a.index - b.index).map(copy);
  }

  async findExpiredLeases({ expiredForMs, limit }: FindExpiredLeasesInput): Promise<SessionKey[]> {
    const found: SessionKey[] = [];
    const cutoff = this.#clock.now().getTime() - expiredForMs;
    for (const { record, lease, turns } of this.#sessions.values()) {
      if (found.length >= limit) break;
      const open = record.openTurnId === null ? undefined : turns.get(record.openTurnId);
      if (lease !== null && lease.expiresAt.getTime() <= cutoff && open?.status === "running") {
        found.push({ principal: record.principal, sessionId: record.sessionId });
      }
    }
    return found;
  }

  /** A lease of `owner` lasting `durationMs` from the store's now. */
  #lease(owner: string, durationMs: number): { owner: string; expiresAt: Date } {
    return { owner, expiresAt: new Date(this.#clock.now().getTime() + durationMs) };
  }

  #state(key: SessionKey): SessionState | undefined {
    return this.#sessions.get(keyOf(key));
  }

  /** The session's state when `owner` holds its lease (expired or not); undefined otherwise. */
  #leased(key: SessionKey, owner: string): SessionState | undefined {
    const state = this.#state(key);
    return state?.lease?.owner === owner ? state : undefined;
  }
}

/** JSON of the pair, so no principal or session id can collide with another through a separator. */
function keyOf({ principal, sessionId }: SessionKey): string {
  return JSON.stringify([principal, sessionId]);
}

function copy<T>(value: T): T {
  return structuredClone(value);
}

function applySessionPatch(record: SessionRecord, patch: SessionPatch): void {
  for (const field of SESSION_PATCH_KEYS) {
    if (patch[field] !== undefined) Object.assign(record, { [field]: patch[field] });
  }
}
