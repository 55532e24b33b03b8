import type { ToolContinuationRequest, UserTurnRequest } from "@aptix/contracts";
import { systemClock } from "../defaults/system-clock.js";
import type { Clock } from "../ports/clock.js";
import type {
  DeleteSessionInput,
  DeleteSessionResult,
  FindExpiredLeasesInput,
  FindIdleSessionsInput,
  FinishResponseDeletionsInput,
  ListSessionsInput,
  LlmCallWrite,
  MessageTurn,
  PruneTracesInput,
  RecordLlmCallInput,
  ResponseDeletion,
  SessionListing,
  SessionStore,
  SumSessionUsageInput,
  SumUsageInput,
  TakeResponseDeletionsInput,
  TransitionResult,
  TransitionWrite,
  TurnState,
  UsageSum,
} from "../ports/session-store.js";
import type { CompactionRecord } from "../records/compaction-record.js";
import { EMPTY_CURSOR } from "../records/conversation-cursor.js";
import type { LlmCallRecord } from "../records/llm-call-record.js";
import type { ModeHistoryEntry } from "../records/mode-history-entry.js";
import type { SessionKey, SessionPatch, SessionRecord, TurnKey } from "../records/session-record.js";
import type { TranscriptItem } from "../records/transcript-item.js";
import type { TurnPatch, TurnRecord } from "../records/turn-record.js";
import { type UsageEntry, usageOf } from "../records/usage-entry.js";

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
  /** By `fromPosition`. */
  compactions: CompactionRecord[];
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
 * - `applyTransition` judges, in order, the running-turn cap (`rate_limited`), the lease (`busy`), then the
 *   version and the turns it names (`stale`: the version is not `expectVersion`, the session exists without
 *   one, the turn to insert exists or a turn to patch does not); refused, it writes nothing.
 * - `version` goes up by one with every write (a session's creating write sets it to 1); a refused write and
 *   a release by someone other than the holder leave it.
 * - Lease-guarded writes (`applyTransition` with `whileLeaseHeld`, `recordLlmCall`, `changeMode`) check only
 *   that the session's lease owner is the given owner: a holder may keep writing after its lease expired,
 *   until another claimant takes the lease. `releaseLease` (and a transition's `releaseLease`) leave no lease
 *   held; a release by anyone else is a no-op.
 * - Patches apply only the keys they define with a value other than `undefined` (`null` is a value).
 * - `session.updatedAt` follows writes to the session row's fields: the write's `now` on `applyTransition`
 *   with a turn to insert, a session patch, a mode change or calls with progress (a claim alone leaves it), the
 *   clock on `recordLlmCall` with progress, `entry.changedAt` on `changeMode`.
 *   Turns a transition patches are stamped with its `now`.
 *
 * Every method is synchronous under its `async` signature, so each is atomic with respect to the others.
 */
export class InMemorySessionStore implements SessionStore {
  readonly #sessions = new Map<string, SessionState>();
  readonly #responseDeletions = new Map<string, ResponseDeletion & { dueAt: Date }>();
  /** Every call's usage, by its `callId`, kept once: kept when its session is deleted. */
  readonly #usage = new Map<string, UsageEntry>();
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

  async runningAmong(turns: readonly TurnKey[]): Promise<TurnKey[]> {
    return turns
      .filter((key) => this.#state(key)?.turns.get(key.turnId)?.status === "running")
      .map(({ principal, sessionId, turnId }) => ({ principal, sessionId, turnId }));
  }

  async readTurnState(key: SessionKey, turnId: string): Promise<TurnState> {
    const state = this.#state(key);
    if (state === undefined) return {};
    const { record, turns } = state;
    const turn = turns.get(turnId);
    const open =
      record.openTurnId === null || record.openTurnId === turnId ? undefined : turns.get(record.openTurnId);
    return {
      session: copy(record),
      ...(turn ? { turn: copy(turn) } : {}),
      ...(open ? { openTurn: copy(open) } : {}),
    };
  }

  async applyTransition(write: TransitionWrite): Promise<TransitionResult> {
    if (write.whileLeaseHeld === true) return this.#writeWhileLeaseHeld(write);
    const {
      key,
      lease,
      now,
      expectVersion,
      create,
      insertTurn,
      turnPatches = [],
      sessionPatch,
      modeChange,
    } = write;
    if (this.#atRunningCap(key.principal, write.maxRunningTurns)) return { outcome: "rate_limited" };
    let state = this.#state(key);
    if (state !== undefined && write.overrideLease !== true && this.#busy(state)) return { outcome: "busy" };
    if (
      state === undefined
        ? expectVersion !== undefined || create === undefined
        : state.record.version !== expectVersion
    ) {
      return { outcome: "stale" };
    }
    if (insertTurn !== undefined && state?.turns.has(insertTurn.turnId)) return { outcome: "stale" };
    if (turnPatches.some(({ turnId }) => !state?.turns.has(turnId) && insertTurn?.turnId !== turnId)) {
      return { outcome: "stale" };
    }
    // Judged: from here on every write is made.
    if (state === undefined) {
      state = newState(key, create as NonNullable<typeof create>, now);
      this.#sessions.set(keyOf(key), state);
    } else state.record.version += 1;
    state.lease = this.#lease(lease.owner, lease.durationMs);
    if (insertTurn !== undefined) {
      state.turns.set(insertTurn.turnId, copy(insertTurn));
      state.record.turnCount += 1;
    }
    for (const { turnId, patch } of turnPatches)
      this.#patchTurn(state.turns.get(turnId) as TurnRecord, patch, now);
    if (modeChange !== undefined) state.modeHistory.push(copy(modeChange));
    if (sessionPatch !== undefined) applySessionPatch(state.record, copy(sessionPatch));
    if (insertTurn !== undefined || sessionPatch !== undefined || modeChange !== undefined) {
      state.record.updatedAt = new Date(now);
    }
    if (write.releaseLease === true) state.lease = null;
    return { outcome: "applied", session: copy(state.record) };
  }

  /** A lease-guarded transition (`TransitionWrite.whileLeaseHeld`): a running turn's write. */
  #writeWhileLeaseHeld(write: TransitionWrite): TransitionResult {
    const { key, lease, now, turnPatches = [], sessionPatch, llmCalls = [] } = write;
    const state = this.#leased(key, lease.owner);
    if (state === undefined || turnPatches.some(({ turnId }) => !state.turns.has(turnId))) {
      return { outcome: "stale" };
    }
    for (const call of llmCalls) this.#keepCall(state, call);
    if (llmCalls.some((call) => call.progress !== undefined)) state.record.updatedAt = new Date(now);
    for (const { turnId, patch } of turnPatches)
      this.#patchTurn(state.turns.get(turnId) as TurnRecord, patch, now);
    state.record.version += 1;
    if (sessionPatch !== undefined) {
      applySessionPatch(state.record, copy(sessionPatch));
      state.record.updatedAt = new Date(now);
    }
    if (write.releaseLease === true) state.lease = null;
    return { outcome: "applied", session: copy(state.record) };
  }

  async releaseLease(key: SessionKey, owner: string): Promise<void> {
    const state = this.#leased(key, owner);
    if (state === undefined) return;
    state.lease = null;
    state.record.version += 1;
  }

  async recordLlmCall({ lease, ...write }: RecordLlmCallInput): Promise<boolean> {
    const state = this.#leased(write.call, lease.owner);
    if (state === undefined) return false;
    this.#keepCall(state, write);
    state.lease = this.#lease(lease.owner, lease.durationMs);
    state.record.version += 1;
    return true;
  }

  /** Whether `owner` holds the session's lease, as lease-guarded writes judge it (`InMemoryTurnEventLog`). */
  holdsLease(key: SessionKey, owner: string): boolean {
    return this.#leased(key, owner) !== undefined;
  }

  /** Applies a copy of `patch` to the stored `turn`, stamped `now`. */
  #patchTurn(turn: TurnRecord, patch: TurnPatch, now: Date): void {
    const copied = copy(patch);
    for (const field of TURN_PATCH_KEYS) {
      if (copied[field] !== undefined) Object.assign(turn, { [field]: copied[field] });
    }
    turn.updatedAt = new Date(now);
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
    const usage = usageOf(stored);
    if (usage !== undefined) this.#keepUsage(usage);
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
    if (write.compaction !== undefined) {
      const compaction = copy(write.compaction);
      state.compactions = [
        ...state.compactions.filter((kept) => kept.fromPosition !== compaction.fromPosition),
        compaction,
      ].sort((a, b) => a.fromPosition - b.fromPosition);
    }
  }

  async changeMode(entry: ModeHistoryEntry, leaseOwner: string): Promise<boolean> {
    const state = this.#leased(entry, leaseOwner);
    if (state === undefined) return false;
    const stored = copy(entry);
    state.record.mode = stored.newMode;
    state.record.updatedAt = new Date(stored.changedAt);
    state.record.version += 1;
    state.modeHistory.push(stored);
    return true;
  }

  async listCompactions(key: SessionKey): Promise<CompactionRecord[]> {
    return (this.#state(key)?.compactions ?? []).map(copy);
  }

  async loadTranscript(key: SessionKey, length: number, from = 0): Promise<TranscriptItem[]> {
    const state = this.#state(key);
    if (state === undefined) return [];
    return [...state.transcript.entries()]
      .filter(([position]) => position >= from && position < length)
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

  async listSessions({ principal, limit, workspaceId, after }: ListSessionsInput): Promise<SessionListing[]> {
    const listings = [...this.#sessions.values()]
      .filter(({ record }) => record.principal === principal)
      .map(listingOf)
      .filter((listing) => workspaceId === undefined || listing.workspaceId === workspaceId)
      .sort(newestFirst);
    const from = after === undefined ? 0 : listings.findIndex((listing) => newestFirst(after, listing) < 0);
    return (from < 0 ? [] : listings.slice(from, from + limit)).map(copy);
  }

  async listMessageTurns(key: SessionKey, fromSequence: number, limit: number): Promise<MessageTurn[]> {
    const turns = (await this.listTurns(key)).filter((turn) => turn.sequence >= fromSequence).slice(0, limit);
    return Promise.all(
      turns.map(async (turn) => {
        const [first, ...continuations] = turn.rounds;
        const instruction = (first?.request as UserTurnRequest | undefined)?.instruction;
        const answer = turn.rounds.at(-1)?.result;
        const calls = await this.listLlmCalls(key, turn.turnId);
        return {
          turnId: turn.turnId,
          status: turn.status,
          error: turn.error,
          createdAt: turn.createdAt,
          updatedAt: turn.updatedAt,
          completedAt: turn.completedAt,
          ...(instruction === undefined ? {} : { instruction }),
          toolCalls: calls.flatMap((call) => call.response?.toolCalls ?? []),
          toolOutcomes: [
            ...turn.toolExecutions,
            ...continuations.flatMap((round) => (round.request as ToolContinuationRequest).toolResults),
          ].map(({ toolCallId, resultJson, errorMessage }) => ({
            toolCallId,
            ...(resultJson === undefined ? {} : { resultJson }),
            ...(errorMessage === undefined ? {} : { errorMessage }),
          })),
          ...(answer === undefined ? {} : { answer }),
        };
      }),
    );
  }

  async deleteSession({
    key,
    expectVersion,
    responsesStoredBy,
  }: DeleteSessionInput): Promise<DeleteSessionResult> {
    const state = this.#state(key);
    if (state === undefined || state.record.version !== expectVersion) return "stale";
    if (this.#busy(state)) return "busy";
    if (responsesStoredBy !== undefined) {
      for (const call of [...state.calls.values()].flat()) {
        const responseId = call.response?.responseId;
        if (responseId === undefined || responseId === null) continue;
        const deletion = { provider: responsesStoredBy, responseId, attempts: 0 };
        this.#responseDeletions.set(nameOfDeletion(deletion), { ...deletion, dueAt: new Date(0) });
      }
    }
    this.#sessions.delete(keyOf(key));
    return "deleted";
  }

  async takeResponseDeletions({
    limit,
    dueBy,
    retryAt,
  }: TakeResponseDeletionsInput): Promise<ResponseDeletion[]> {
    const due = [...this.#responseDeletions.values()]
      .filter((deletion) => deletion.dueAt.getTime() <= dueBy.getTime())
      .slice(0, Math.max(0, Math.ceil(limit)));
    for (const deletion of due) deletion.dueAt = new Date(retryAt);
    return due.map(({ provider, responseId, attempts }) => ({ provider, responseId, attempts }));
  }

  async finishResponseDeletions({ done, failed }: FinishResponseDeletionsInput): Promise<void> {
    for (const deletion of done) this.#responseDeletions.delete(nameOfDeletion(deletion));
    for (const { retryAt, ...deletion } of failed) {
      const kept = this.#responseDeletions.get(nameOfDeletion(deletion));
      if (kept === undefined) continue;
      kept.attempts += 1;
      kept.dueAt = new Date(retryAt);
    }
  }

  async findIdleSessions({ idleBefore, limit }: FindIdleSessionsInput): Promise<SessionKey[]> {
    return [...this.#sessions.values()]
      .filter(({ record }) => record.updatedAt.getTime() < idleBefore.getTime())
      .slice(0, Math.max(0, Math.ceil(limit)))
      .map(({ record }) => ({ principal: record.principal, sessionId: record.sessionId }));
  }

  async pruneTraces({ startedBefore, limit }: PruneTracesInput): Promise<number> {
    let pruned = 0;
    for (const { calls } of this.#sessions.values()) {
      for (const call of [...calls.values()].flat()) {
        if (pruned >= limit) return pruned;
        if (call.request === null || call.startedAt.getTime() >= startedBefore.getTime()) continue;
        Object.assign(call, { request: null, providerRequest: null, providerResponse: null });
        pruned++;
      }
    }
    return pruned;
  }

  async recordUsage(entries: readonly UsageEntry[]): Promise<void> {
    for (const entry of entries) this.#keepUsage(copy(entry));
  }

  /** Sums the calls of whole UTC days, as the drizzle store's daily roll-ups do, a page of sessions at a time. */
  async sumUsage({ principal, from, to, groupBy, page }: SumUsageInput): Promise<UsageSum[]> {
    const [first, last] = [dayOf(from), dayOf(to)];
    const inRange = [...this.#usage.values()].filter((entry) => {
      const day = dayOf(entry.startedAt);
      return entry.principal === principal && day >= first && day < last;
    });
    const keyOf = (entry: UsageEntry) =>
      groupBy === "day"
        ? dayOf(entry.startedAt)
        : groupBy === "model"
          ? entry.model
          : (entry.sessionId ?? "");
    let entries = inRange;
    if (page !== undefined) {
      const after = page.after;
      const sessions = [...new Set(inRange.map(keyOf))]
        .filter((key) => after === undefined || key > after)
        .sort()
        .slice(0, page.limit);
      entries = inRange.filter((entry) => sessions.includes(keyOf(entry)));
    }
    return sumsByKey(entries, keyOf);
  }

  async sumSessionUsage({ principal, sessionId, since }: SumSessionUsageInput): Promise<UsageSum[]> {
    const entries = [...this.#usage.values()].filter(
      (entry) =>
        entry.principal === principal &&
        entry.sessionId === sessionId &&
        entry.startedAt.getTime() >= since.getTime(),
    );
    return sumsByKey(entries, (entry) => entry.model);
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

  /** Keeps a call's usage unless one is kept under its `callId` already: usage is never replaced. */
  #keepUsage(entry: UsageEntry): void {
    if (!this.#usage.has(entry.callId)) this.#usage.set(entry.callId, entry);
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

/** A session `create` makes at `now`: its first write, so version 1. */
function newState(
  key: SessionKey,
  create: Pick<SessionRecord, "conversationContextId" | "agentContextId" | "mode">,
  now: Date,
): SessionState {
  return {
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
      version: 1,
      createdAt: new Date(now),
      updatedAt: new Date(now),
    },
    lease: null,
    transcript: new Map(),
    turns: new Map(),
    calls: new Map(),
    modeHistory: [],
    compactions: [],
  };
}

/** What the list shows of a session's turns. */
function listingOf({ record, turns }: SessionState): SessionListing {
  const ordered = [...turns.values()].sort((a, b) => a.sequence - b.sequence);
  // A turn's first round is its user turn.
  const requests = ordered.map((turn) => turn.rounds[0]?.request as UserTurnRequest | undefined);
  const { sessionId, mode, turnCount, createdAt, updatedAt } = record;
  const listing: SessionListing = { sessionId, mode, turnCount, createdAt, updatedAt };
  const last = ordered.at(-1);
  if (last !== undefined) listing.lastTurnStatus = last.status;
  const instruction = requests.find((request) => request?.instruction !== undefined)?.instruction;
  if (instruction !== undefined) listing.firstInstruction = instruction;
  const workspaceId = requests.findLast((request) => request?.workspaceId !== undefined)?.workspaceId;
  if (workspaceId !== undefined) listing.workspaceId = workspaceId;
  return listing;
}

/** Most recently active first: `updatedAt`, then `sessionId`, descending. */
function newestFirst(
  a: { updatedAt: Date; sessionId: string },
  b: { updatedAt: Date; sessionId: string },
): number {
  const byTime = b.updatedAt.getTime() - a.updatedAt.getTime();
  if (byTime !== 0) return byTime;
  return a.sessionId < b.sessionId ? 1 : a.sessionId > b.sessionId ? -1 : 0;
}

function copy<T>(value: T): T {
  return structuredClone(value);
}

function applySessionPatch(record: SessionRecord, patch: SessionPatch): void {
  for (const field of SESSION_PATCH_KEYS) {
    if (patch[field] !== undefined) Object.assign(record, { [field]: patch[field] });
  }
}

function nameOfDeletion({ provider, responseId }: Pick<ResponseDeletion, "provider" | "responseId">): string {
  return JSON.stringify([provider, responseId]);
}

/** The UTC date of `time`, `YYYY-MM-DD`. */
function dayOf(time: Date): string {
  return time.toISOString().slice(0, 10);
}

/** `entries` summed by `keyOf` and by provider and model. */
function sumsByKey(entries: readonly UsageEntry[], keyOf: (entry: UsageEntry) => string): UsageSum[] {
  const sums = new Map<string, UsageSum>();
  for (const entry of entries) {
    const key = keyOf(entry);
    const name = JSON.stringify([key, entry.provider, entry.model]);
    const sum = sums.get(name) ?? {
      key,
      provider: entry.provider,
      model: entry.model,
      inputTokens: 0,
      cachedInputTokens: 0,
      outputTokens: 0,
      reasoningTokens: 0,
      llmCalls: 0,
    };
    sum.inputTokens += entry.inputTokens;
    sum.cachedInputTokens += entry.cachedInputTokens;
    sum.outputTokens += entry.outputTokens;
    sum.reasoningTokens += entry.reasoningTokens;
    sum.llmCalls += 1;
    sums.set(name, sum);
  }
  return [...sums.values()];
}
