import { fail, IdentifierSchema, type InvokeFailure, type InvokeResult, ok } from "@aptix/contracts";
import type { Clock } from "../ports/clock.js";
import type { IdGenerator } from "../ports/id-generator.js";
import type { SessionStores } from "../ports/session-stores.js";
import type { TranscriptStore } from "../ports/transcript-store.js";
import type {
  LlmCallWrite,
  TranscriptProgress,
  TurnState,
  TurnStore,
  TurnWrite,
} from "../ports/turn-store.js";
import type { RoundLease } from "../reasoner/round-lease.js";
import type { CompactionRecord } from "../records/compaction-record.js";
import type { LlmCallRecord } from "../records/llm-call-record.js";
import type { ModeHistoryEntry } from "../records/mode-history-entry.js";
import type { SessionKey, SessionPatch, SessionRecord } from "../records/session-record.js";
import type { TranscriptItem } from "../records/transcript-item.js";
import type { TurnPatch, TurnRecord } from "../records/turn-record.js";
import type { WebhookEvents } from "./webhook-events.js";

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
  stores: SessionStores;
  clock: Clock;
  ids: IdGenerator;
  /** How long a claimed lease lasts before another instance may take the session over. */
  leaseMs: number;
  /**
   * The most turns one principal may run at once across every instance (`TurnWrite`'s `maxRunningTurns`);
   * absent: no cap.
   */
  maxRunningTurns?: number;
  /** Decides the webhook events each write makes, written with it; none when absent. */
  webhookEvents?: WebhookEvents;
}

type ClaimingWrite = Exclude<TurnWrite, { guard: "lease" }>;

/** A claim's writes, as Entry decides them: the lease and the running-turn cap are Persistence's to add. */
export type TurnChange = ClaimingWrite extends infer W
  ? W extends ClaimingWrite
    ? Omit<W, "lease" | "maxRunningTurns">
    : never
  : never;

/**
 * The `Retry-After` of a principal at its running-turn cap: a turn holds its slot for as long as its round
 * runs, so a second is a fair first wait (the client backs off further when refused again).
 */
const RUNNING_TURNS_RETRY_AFTER_SECONDS = 1;

export class TurnPersistence {
  private readonly stores: SessionStores;
  private readonly clock: Clock;
  private readonly ids: IdGenerator;
  private readonly leaseMs: number;
  private readonly cap: { maxRunningTurns?: number };
  private readonly webhookEvents: WebhookEvents | undefined;

  constructor(options: TurnPersistenceOptions) {
    ({ stores: this.stores, clock: this.clock, ids: this.ids, leaseMs: this.leaseMs } = options);
    this.cap = options.maxRunningTurns === undefined ? {} : { maxRunningTurns: options.maxRunningTurns };
    this.webhookEvents = options.webhookEvents;
  }

  // An id that breaks the contracts' identifier rule (a NUL, which Postgres cannot even compare; an escape
  // left undecoded in a URL) names nothing: it is unknown without asking the store.
  getSession(key: SessionKey): Promise<SessionRecord | undefined> {
    if (!isIdentifier(key.sessionId)) return Promise.resolve(undefined);
    return this.stores.directory.getSession(key);
  }

  getTurn(key: SessionKey, turnId: string): Promise<TurnRecord | undefined> {
    if (!isIdentifier(key.sessionId) || !isIdentifier(turnId)) return Promise.resolve(undefined);
    return this.stores.turns.getTurn(key, turnId);
  }

  /** The session, the turn `turnId` and the session's open turn, as one read (`TurnStore.readTurnState`). */
  readTurnState(key: SessionKey, turnId: string): Promise<TurnState> {
    if (!isIdentifier(key.sessionId) || !isIdentifier(turnId)) return Promise.resolve({});
    return this.stores.turns.readTurnState(key, turnId);
  }

  /**
   * Applies a claim's writes with a new lease of the session, in one store step (docs/turn-cost.md): `applied`
   * with the lease (given back already when the write gives it back), or why nothing was written. `runsTurn`:
   * the write starts or resumes a running turn, so the principal's running-turn cap applies (refused
   * RATE_LIMITED).
   */
  async apply(
    change: TurnChange,
    runsTurn: boolean,
  ): Promise<
    | { outcome: "applied"; session: SessionRecord; lease: SessionLease }
    | { outcome: "busy" | "stale" }
    | { outcome: "refused"; failure: InvokeFailure }
  > {
    const owner = this.ids.newId("lease");
    const applied = await this.stores.turns.write(
      // A cancel takes the lease whoever holds it; a queued turn's change leaves it alone.
      withWebhooks(
        this.webhookEvents,
        change.guard === "override" || change.guard === "queue"
          ? change
          : { ...change, lease: { owner, durationMs: this.leaseMs }, ...(runsTurn ? this.cap : {}) },
      ),
    );
    switch (applied.outcome) {
      case "applied": {
        const lease = new SessionLease({
          stores: this.stores,
          clock: this.clock,
          key: change.key,
          owner,
          leaseMs: this.leaseMs,
          ...(this.webhookEvents ? { webhookEvents: this.webhookEvents } : {}),
        });
        return { outcome: "applied", session: applied.session, lease };
      }
      case "rate_limited":
        return { outcome: "refused", failure: this.#rateLimited() };
      default:
        return { outcome: applied.outcome };
    }
  }

  /**
   * Tells the webhooks of a request refused before any write (a budget spent): the event is the only thing
   * written, so it is its own atomic step.
   */
  async announceRefusal(key: SessionKey, failure: InvokeFailure, turnId?: string): Promise<void> {
    if (this.webhookEvents === undefined || failure.errors[0]?.code !== "BUDGET_EXCEEDED") return;
    const data = { principal: key.principal, sessionId: key.sessionId, ...(turnId ? { turnId } : {}) };
    const deliveries = this.webhookEvents.of(
      "budget.exceeded",
      { ...data, result: failure },
      this.clock.now(),
    );
    if (deliveries.length > 0) await this.stores.webhooks.enqueue(deliveries);
  }

  #rateLimited(): InvokeFailure {
    const max = this.cap.maxRunningTurns;
    return fail(
      "RATE_LIMITED",
      `This principal already has ${max} turns running, the most it may run at once (APTIX_MAX_RUNNING_TURNS); retry when one has finished.`,
      { limit: "APTIX_MAX_RUNNING_TURNS", retryAfterSeconds: RUNNING_TURNS_RETRY_AFTER_SECONDS },
    );
  }
}

/**
 * Writes of one turn execution, valid while its lease holds. Each answers TURN_INTERRUPTED when the lease was lost.
 *
 * The record of an LLM call after which no server tool runs (an answer, a failed call, or a call whose tools
 * all go to the client) is kept back and written with the lease's next write, in the same store step: a
 * plain turn's call is settled with its turn in one commit, and so is a round's call that hands its tools to
 * the client. A call whose tools the server runs is written at once, so the lease is known held (and renewed)
 * before any tool runs.
 */
export class SessionLease implements RoundLease {
  private readonly stores: { turns: TurnStore; transcripts: TranscriptStore };
  private readonly clock: Clock;
  readonly key: SessionKey;
  readonly owner: string;
  private readonly leaseMs: number;
  private readonly webhookEvents: WebhookEvents | undefined;
  /** Calls recorded and not written yet, in order. */
  #unwritten: LlmCallWrite[] = [];

  constructor(options: {
    stores: { turns: TurnStore; transcripts: TranscriptStore };
    clock: Clock;
    key: SessionKey;
    owner: string;
    leaseMs: number;
    webhookEvents?: WebhookEvents;
  }) {
    ({
      stores: this.stores,
      clock: this.clock,
      key: this.key,
      owner: this.owner,
      leaseMs: this.leaseMs,
      webhookEvents: this.webhookEvents,
    } = options);
  }

  /**
   * The lease's last write: changes the turn and the session together, with the calls kept back, and gives the
   * lease back, as one write guarded by the lease (`TurnWrite`). Refused (the lease
   * lost), it writes none of them.
   */
  async settle(
    turnId: string,
    turnPatch: TurnPatch,
    sessionPatch?: SessionPatch,
  ): Promise<InvokeResult<void>> {
    const llmCalls = this.#unwritten;
    const settled = await this.stores.turns.write(
      withWebhooks(this.webhookEvents, {
        guard: "lease",
        key: this.key,
        owner: this.owner,
        now: this.clock.now(),
        turnPatches: [{ turnId, patch: turnPatch }],
        ...(sessionPatch ? { sessionPatch } : {}),
        releaseLease: true,
        ...(llmCalls.length > 0 ? { llmCalls } : {}),
      }),
    );
    if (settled.outcome !== "applied") return leaseLost();
    this.#unwritten = [];
    return ok(undefined);
  }

  /** Ends the lease without touching a turn: for requests that fail before their turn starts. */
  release(): Promise<void> {
    return this.stores.turns.releaseLease(this.key, this.owner);
  }

  /**
   * Keeps the call's trace; after a success, also the transcript items it added and the new cursor. A call
   * after which no server tool runs is written with the lease's next write (see the class); others at once.
   * `runsServerTools`: whether server tools run next; unless told, whenever the call asked for tools.
   */
  recordLlmCall(
    call: LlmCallRecord,
    progress?: TranscriptProgress,
    runsServerTools = (call.response?.toolCalls.length ?? 0) > 0,
  ): Promise<InvokeResult<void>> {
    this.#unwritten.push(progress ? { call, progress } : { call });
    return runsServerTools ? this.#writeUnwritten() : Promise.resolve(ok(undefined));
  }

  /** Keeps a compaction with the call that wrote its summary and the compacted chain, at once. */
  recordCompaction(
    call: LlmCallRecord,
    progress: TranscriptProgress,
    compaction: CompactionRecord,
  ): Promise<InvokeResult<void>> {
    this.#unwritten.push({ call, progress, compaction });
    return this.#writeUnwritten();
  }

  async loadTranscript(length: number, from = 0): Promise<TranscriptItem[]> {
    // The calls kept back go first, so the read sees them; a lost lease shows at the round's next write.
    await this.#writeUnwritten();
    return this.stores.transcripts.loadTranscript(this.key, length, from);
  }

  async changeMode(entry: ModeHistoryEntry): Promise<InvokeResult<void>> {
    const written = await this.#writeUnwritten();
    if (!written.successful) return written;
    return (await this.stores.turns.changeMode(entry, this.owner)) ? ok(undefined) : leaseLost();
  }

  /** Writes the calls kept back, each renewing the lease, before a write that does not carry them. */
  async #writeUnwritten(): Promise<InvokeResult<void>> {
    while (this.#unwritten.length > 0) {
      const [write] = this.#unwritten as [LlmCallWrite];
      const webhooks = this.webhookEvents?.ofCall(this.key, write, this.clock.now()) ?? [];
      const recorded = await this.stores.turns.recordLlmCall({
        ...write,
        lease: { owner: this.owner, durationMs: this.leaseMs },
        ...(webhooks.length > 0 ? { webhooks } : {}),
      });
      if (!recorded) return leaseLost();
      this.#unwritten.shift();
    }
    return ok(undefined);
  }
}

/** `write` with the deliveries of the webhook events it makes, kept in its atomic step. */
function withWebhooks<W extends TurnWrite>(events: WebhookEvents | undefined, write: W): W {
  const webhooks = events?.ofWrite(write) ?? [];
  return webhooks.length > 0 ? { ...write, webhooks } : write;
}

/** Whether `id` follows the identifier rule every id a client or core mints follows (`file_…` included). */
export function isIdentifier(id: string): boolean {
  return IdentifierSchema.safeParse(id).success;
}
