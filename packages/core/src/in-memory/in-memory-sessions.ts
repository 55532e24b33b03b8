import { systemClock } from "../defaults/system-clock.js";
import type { Clock } from "../ports/clock.js";
import type { StoredFile } from "../ports/file-store.js";
import type { ResponseDeletion } from "../ports/session-directory.js";
import type { LlmCallWrite, NewSession } from "../ports/turn-store.js";
import type { WebhookDelivery } from "../ports/webhook-outbox.js";
import type { CompactionRecord } from "../records/compaction-record.js";
import { EMPTY_CURSOR } from "../records/conversation-cursor.js";
import type { LlmCallRecord } from "../records/llm-call-record.js";
import type { ModeHistoryEntry } from "../records/mode-history-entry.js";
import type { SessionKey, SessionPatch, SessionRecord } from "../records/session-record.js";
import type { TranscriptItem } from "../records/transcript-item.js";
import type { TurnRecord } from "../records/turn-record.js";
import { type UsageEntry, usageOf } from "../records/usage-entry.js";

/** The fields a `SessionPatch` may set; any other key of a patch object is ignored, as a SQL store would. */
const SESSION_PATCH_KEYS = [
  "mode",
  "solutionContextText",
  "cursor",
  "openTurnId",
] as const satisfies readonly (keyof SessionPatch)[];

/** A delivery in the outbox: due from `dueAt`, claimed by one claimant until its claim expires. */
export interface OutboxEntry {
  delivery: WebhookDelivery;
  attempts: number;
  dueAt: Date;
  claim: { claimant: string; until: Date } | null;
}

/** Everything kept for one (principal, sessionId). */
export interface SessionState {
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

/** A file kept, and the sessions besides its producer's whose turns, copied by a fork, name it. */
export interface KeptFile {
  file: StoredFile;
  content: Uint8Array;
  heldBy: Set<string>;
}

/**
 * What the in-memory domain stores share, as tables of one database: a session's lease, read by the turns'
 * writes and by its deletion, every call's usage, kept by the turns' writes and summed by the usage store, and
 * the files of the `InMemoryFileStore` made with them, which a fork shares and a deletion gives up.
 */
export class InMemorySessions {
  readonly sessions = new Map<string, SessionState>();
  readonly responseDeletions = new Map<string, ResponseDeletion & { dueAt: Date }>();
  /** Every call's usage, by its `callId`, kept once: kept when its session is deleted. */
  readonly usage = new Map<string, UsageEntry>();
  /** By `fileKeyOf`. */
  readonly files = new Map<string, KeptFile>();
  /** The webhook outbox, in the order deliveries were written. */
  readonly webhooks = new Map<string, OutboxEntry>();
  /** The store's clock: it judges leases and stamps `updatedAt` on writes that are not given a time. */
  readonly clock: Clock;

  constructor(clock: Clock = systemClock) {
    this.clock = clock;
  }

  state(key: SessionKey): SessionState | undefined {
    return this.sessions.get(keyOf(key));
  }

  /** The session's state when `owner` holds its lease (expired or not); undefined otherwise. */
  leased(key: SessionKey, owner: string): SessionState | undefined {
    const state = this.state(key);
    return state?.lease?.owner === owner ? state : undefined;
  }

  /** Whether the session's lease is held: taken, and not expired by the store's clock. */
  busy(state: SessionState): boolean {
    return state.lease !== null && state.lease.expiresAt.getTime() > this.clock.now().getTime();
  }

  /** A lease of `owner` lasting `durationMs` from the store's now. */
  lease(owner: string, durationMs: number): { owner: string; expiresAt: Date } {
    return { owner, expiresAt: new Date(this.clock.now().getTime() + durationMs) };
  }

  /** Adds the session `create` makes at `now`: its first write, so version 1. */
  create(key: SessionKey, create: NewSession, now: Date): SessionState {
    const state: SessionState = {
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
    this.sessions.set(keyOf(key), state);
    return state;
  }

  delete(key: SessionKey): void {
    this.sessions.delete(keyOf(key));
  }

  /**
   * A fork's share of its source's files: those of the copied turns that the source produced or holds are held
   * by the fork too.
   */
  shareFiles(source: SessionKey, forkId: string, copiedTurnIds: ReadonlySet<string>): void {
    for (const { file, heldBy } of this.files.values()) {
      const by = file.producedBy;
      if (file.principal !== source.principal || by === undefined || !copiedTurnIds.has(by.turnId)) continue;
      if (by.sessionId === source.sessionId || heldBy.has(source.sessionId)) heldBy.add(forkId);
    }
  }

  /**
   * A deleted session's files: those it produced go to a session that holds them (its turn has the same id
   * there), or are deleted when none does; those it held are held no more.
   */
  releaseFiles(key: SessionKey): void {
    for (const [name, kept] of this.files) {
      const by = kept.file.producedBy;
      if (kept.file.principal !== key.principal) continue;
      kept.heldBy.delete(key.sessionId);
      if (by?.sessionId !== key.sessionId) continue;
      const [heir] = [...kept.heldBy].sort();
      if (heir === undefined) {
        this.files.delete(name);
        continue;
      }
      kept.heldBy.delete(heir);
      kept.file.producedBy = { sessionId: heir, turnId: by.turnId };
    }
  }

  /** Keeps a call's trace (replacing one of the same index), its usage and its transcript progress. */
  keepCall(state: SessionState, write: LlmCallWrite): void {
    const stored = copy(write.call);
    const written = write.progress === undefined ? undefined : copy(write.progress);
    const calls = (state.calls.get(stored.turnId) ?? []).filter((kept) => kept.index !== stored.index);
    state.calls.set(stored.turnId, [...calls, stored]);
    const usage = usageOf(stored);
    if (usage !== undefined) this.keepUsage(usage);
    if (written !== undefined) {
      for (const position of [...state.transcript.keys()]) {
        if (position >= written.fromPosition) state.transcript.delete(position);
      }
      written.items.forEach((item, offset) => {
        state.transcript.set(written.fromPosition + offset, item);
      });
      state.record.cursor = written.cursor;
      state.record.updatedAt = this.clock.now();
    }
    if (write.compaction !== undefined) {
      const compaction = copy(write.compaction);
      state.compactions = [
        ...state.compactions.filter((kept) => kept.fromPosition !== compaction.fromPosition),
        compaction,
      ].sort((a, b) => a.fromPosition - b.fromPosition);
    }
  }

  /** Adds deliveries to the outbox, due now. */
  keepWebhooks(deliveries: readonly WebhookDelivery[] = []): void {
    for (const delivery of deliveries) {
      this.webhooks.set(delivery.deliveryId, {
        delivery: copy(delivery),
        attempts: 0,
        dueAt: this.clock.now(),
        claim: null,
      });
    }
  }

  /** Keeps a call's usage unless one is kept under its `callId` already: usage is never replaced. */
  keepUsage(entry: UsageEntry): void {
    if (!this.usage.has(entry.callId)) this.usage.set(entry.callId, entry);
  }
}

/** JSON of the pair, so no principal or session id can collide with another through a separator. */
function keyOf({ principal, sessionId }: SessionKey): string {
  return JSON.stringify([principal, sessionId]);
}

/** JSON of the pair, as `keyOf`. */
export function fileKeyOf(principal: string, fileId: string): string {
  return JSON.stringify([principal, fileId]);
}

export function copy<T>(value: T): T {
  return structuredClone(value);
}

export function applySessionPatch(record: SessionRecord, patch: SessionPatch): void {
  for (const field of SESSION_PATCH_KEYS) {
    if (patch[field] !== undefined) Object.assign(record, { [field]: patch[field] });
  }
}
