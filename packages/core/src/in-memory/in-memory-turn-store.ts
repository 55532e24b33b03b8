import type {
  FindExpiredLeasesInput,
  RecordLlmCallInput,
  TurnState,
  TurnStore,
  TurnWrite,
  TurnWriteResult,
} from "../ports/turn-store.js";
import type { ModeHistoryEntry } from "../records/mode-history-entry.js";
import type { SessionKey, TurnKey } from "../records/session-record.js";
import type { TurnPatch, TurnRecord } from "../records/turn-record.js";
import { applySessionPatch, copy, type InMemorySessions, type SessionState } from "./in-memory-sessions.js";

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
  "startCursor",
  "mode",
] as const satisfies readonly (keyof TurnPatch)[];

/**
 * A `TurnStore` in process memory (see `inMemorySessionStores` for what every in-memory store shares):
 *
 * - `write` judges, in order, the running-turn cap (`rate_limited`), the lease (`busy`), then the version and
 *   the turns it names (`stale`: the version is not `expectVersion`, the session exists though the write creates
 *   it, the turn to insert exists or a turn to patch does not); refused, it writes nothing. A `queue` write is
 *   judged by the version and the turns alone, and leaves the lease as it is.
 * - `readTurnState` and `findStartableQueued` order a session's queued turns by sequence.
 * - `version` goes up by one with every write (a session's creating write sets it to 1); a refused write and
 *   a release by someone other than the holder leave it.
 * - Lease-guarded writes (`write` guarded by `lease`, `recordLlmCall`, `changeMode`) check only that the
 *   session's lease owner is the given owner: a holder may keep writing after its lease expired, until another
 *   claimant takes the lease. `releaseLease` (and a write's `releaseLease`) leave no lease held; a release by
 *   anyone else is a no-op.
 * - Patches apply only the keys they define with a value other than `undefined` (`null` is a value).
 * - `session.updatedAt` follows writes to the session row's fields: the write's `now` with a turn to insert, a
 *   session patch, a mode change or calls with progress (a claim alone leaves it), the clock on `recordLlmCall`
 *   with progress, `entry.changedAt` on `changeMode`. Turns a write patches are stamped with its `now`.
 */
export class InMemoryTurnStore implements TurnStore {
  readonly #shared: InMemorySessions;

  constructor(shared: InMemorySessions) {
    this.#shared = shared;
  }

  async getTurn(key: SessionKey, turnId: string): Promise<TurnRecord | undefined> {
    const turn = this.#shared.state(key)?.turns.get(turnId);
    return turn === undefined ? undefined : copy(turn);
  }

  async runningAmong(turns: readonly TurnKey[]): Promise<TurnKey[]> {
    return turns
      .filter((key) => this.#shared.state(key)?.turns.get(key.turnId)?.status === "running")
      .map(({ principal, sessionId, turnId }) => ({ principal, sessionId, turnId }));
  }

  async readTurnState(key: SessionKey, turnId: string): Promise<TurnState> {
    const state = this.#shared.state(key);
    if (state === undefined) return {};
    const { record, turns } = state;
    const turn = turns.get(turnId);
    const open =
      record.openTurnId === null || record.openTurnId === turnId ? undefined : turns.get(record.openTurnId);
    const queued = queuedOf(state);
    return {
      session: copy(record),
      ...(turn ? { turn: copy(turn) } : {}),
      ...(open ? { openTurn: copy(open) } : {}),
      ...(queued[0] ? { queued: { count: queued.length, next: copy(queued[0]) } } : {}),
    };
  }

  async write(write: TurnWrite): Promise<TurnWriteResult> {
    if (write.guard === "lease") return this.#writeWhileLeaseHeld(write);
    const { key, now, turnPatches = [], sessionPatch } = write;
    if (write.guard === "queue") return this.#writeQueue(write);
    // An override claims nothing: it gives the lease back in the same step.
    const claim = write.guard === "override" ? undefined : write;
    if (this.#atRunningCap(key.principal, claim?.maxRunningTurns)) return { outcome: "rate_limited" };
    const state = this.#shared.state(key);
    if (state !== undefined && write.guard !== "override" && this.#shared.busy(state)) {
      return { outcome: "busy" };
    }
    if (write.guard === "create" ? state !== undefined : state?.record.version !== write.expectVersion) {
      return { outcome: "stale" };
    }
    const insertTurn = claim?.insertTurn;
    if (insertTurn !== undefined && state?.turns.has(insertTurn.turnId)) return { outcome: "stale" };
    if (turnPatches.some(({ turnId }) => !state?.turns.has(turnId) && insertTurn?.turnId !== turnId)) {
      return { outcome: "stale" };
    }
    // Judged: from here on every write is made (a write that does not create its session found it as read).
    const written =
      write.guard === "create" ? this.#shared.create(key, write.create, now) : (state as SessionState);
    if (write.guard !== "create") written.record.version += 1;
    written.lease =
      claim === undefined || claim.releaseLease === true
        ? null
        : this.#shared.lease(claim.lease.owner, claim.lease.durationMs);
    if (insertTurn !== undefined) {
      written.turns.set(insertTurn.turnId, copy(insertTurn));
      written.record.turnCount += 1;
    }
    for (const { turnId, patch } of turnPatches)
      patchTurn(written.turns.get(turnId) as TurnRecord, patch, now);
    if (claim?.modeChange !== undefined) written.modeHistory.push(copy(claim.modeChange));
    if (sessionPatch !== undefined) applySessionPatch(written.record, copy(sessionPatch));
    if (insertTurn !== undefined || sessionPatch !== undefined || claim?.modeChange !== undefined) {
      written.record.updatedAt = new Date(now);
    }
    this.#shared.keepWebhooks(write.webhooks);
    return { outcome: "applied", session: copy(written.record) };
  }

  /** A change of the session's queued turns: guarded by the version alone, the lease left as it is. */
  #writeQueue(write: Extract<TurnWrite, { guard: "queue" }>): TurnWriteResult {
    const { key, now, turnPatches = [], sessionPatch, insertTurn } = write;
    const state = this.#shared.state(key);
    if (state === undefined || state.record.version !== write.expectVersion) return { outcome: "stale" };
    if (insertTurn !== undefined && state.turns.has(insertTurn.turnId)) return { outcome: "stale" };
    if (turnPatches.some(({ turnId }) => !state.turns.has(turnId))) return { outcome: "stale" };
    state.record.version += 1;
    if (insertTurn !== undefined) {
      state.turns.set(insertTurn.turnId, copy(insertTurn));
      state.record.turnCount += 1;
    }
    for (const { turnId, patch } of turnPatches) patchTurn(state.turns.get(turnId) as TurnRecord, patch, now);
    if (sessionPatch !== undefined) applySessionPatch(state.record, copy(sessionPatch));
    if (insertTurn !== undefined || sessionPatch !== undefined) state.record.updatedAt = new Date(now);
    this.#shared.keepWebhooks(write.webhooks);
    return { outcome: "applied", session: copy(state.record) };
  }

  /** A write guarded by the lease: a running turn's. */
  #writeWhileLeaseHeld(write: Extract<TurnWrite, { guard: "lease" }>): TurnWriteResult {
    const { key, owner, now, turnPatches = [], sessionPatch, llmCalls = [] } = write;
    const state = this.#shared.leased(key, owner);
    if (state === undefined || turnPatches.some(({ turnId }) => !state.turns.has(turnId))) {
      return { outcome: "stale" };
    }
    for (const call of llmCalls) this.#shared.keepCall(state, call);
    if (llmCalls.some((call) => call.progress !== undefined)) state.record.updatedAt = new Date(now);
    for (const { turnId, patch } of turnPatches) patchTurn(state.turns.get(turnId) as TurnRecord, patch, now);
    state.record.version += 1;
    if (sessionPatch !== undefined) {
      applySessionPatch(state.record, copy(sessionPatch));
      state.record.updatedAt = new Date(now);
    }
    if (write.releaseLease === true) state.lease = null;
    this.#shared.keepWebhooks(write.webhooks);
    return { outcome: "applied", session: copy(state.record) };
  }

  async releaseLease(key: SessionKey, owner: string): Promise<void> {
    const state = this.#shared.leased(key, owner);
    if (state === undefined) return;
    state.lease = null;
    state.record.version += 1;
  }

  async recordLlmCall({ lease, webhooks, ...write }: RecordLlmCallInput): Promise<boolean> {
    const state = this.#shared.leased(write.call, lease.owner);
    if (state === undefined) return false;
    this.#shared.keepCall(state, write);
    this.#shared.keepWebhooks(webhooks);
    state.lease = this.#shared.lease(lease.owner, lease.durationMs);
    state.record.version += 1;
    return true;
  }

  /** Whether `owner` holds the session's lease, as lease-guarded writes judge it (`InMemoryTurnEventLog`). */
  holdsLease(key: SessionKey, owner: string): boolean {
    return this.#shared.leased(key, owner) !== undefined;
  }

  async changeMode(entry: ModeHistoryEntry, leaseOwner: string): Promise<boolean> {
    const state = this.#shared.leased(entry, leaseOwner);
    if (state === undefined) return false;
    const stored = copy(entry);
    state.record.mode = stored.newMode;
    state.record.updatedAt = new Date(stored.changedAt);
    state.record.version += 1;
    state.modeHistory.push(stored);
    return true;
  }

  async findExpiredLeases({ expiredForMs, limit }: FindExpiredLeasesInput): Promise<SessionKey[]> {
    const found: SessionKey[] = [];
    const cutoff = this.#shared.clock.now().getTime() - expiredForMs;
    for (const { record, lease, turns } of this.#shared.sessions.values()) {
      if (found.length >= limit) break;
      const open = record.openTurnId === null ? undefined : turns.get(record.openTurnId);
      if (lease !== null && lease.expiresAt.getTime() <= cutoff && open?.status === "running") {
        found.push({ principal: record.principal, sessionId: record.sessionId });
      }
    }
    return found;
  }

  async findStartableQueued(limit: number): Promise<TurnKey[]> {
    const found: TurnKey[] = [];
    for (const state of this.#shared.sessions.values()) {
      if (found.length >= limit) break;
      const next = state.record.openTurnId === null ? queuedOf(state)[0] : undefined;
      if (next) found.push({ principal: next.principal, sessionId: next.sessionId, turnId: next.turnId });
    }
    return found;
  }

  /** Whether `principal` runs `max` turns or more: turns `running` whose session's lease is held. */
  #atRunningCap(principal: string, max: number | undefined): boolean {
    if (max === undefined) return false;
    let running = 0;
    for (const state of this.#shared.sessions.values()) {
      if (state.record.principal === principal && isRunning(state) && this.#shared.busy(state)) running++;
    }
    return running >= max;
  }
}

/** The session's queued turns, by sequence. */
function queuedOf(state: SessionState): TurnRecord[] {
  return [...state.turns.values()]
    .filter((turn) => turn.status === "queued")
    .sort((a, b) => a.sequence - b.sequence);
}

function isRunning(state: SessionState): boolean {
  const { openTurnId } = state.record;
  return openTurnId !== null && state.turns.get(openTurnId)?.status === "running";
}

/** Applies a copy of `patch` to the stored `turn`, stamped `now`. */
function patchTurn(turn: TurnRecord, patch: TurnPatch, now: Date): void {
  const copied = copy(patch);
  for (const field of TURN_PATCH_KEYS) {
    if (copied[field] !== undefined) Object.assign(turn, { [field]: copied[field] });
  }
  turn.updatedAt = new Date(now);
}
