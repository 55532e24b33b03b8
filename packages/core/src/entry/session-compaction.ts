import { type InvokeResult, ok, type SessionCompacted } from "@aptix/contracts";
import type { AgentCatalog } from "../catalog/agent-catalog.js";
import type { ConversationContext } from "../catalog/conversation-context.js";
import type { CompositionStep } from "../composition/composition-step.js";
import { countItemTokens } from "../composition/context-window.js";
import { storedProgress } from "../lifecycle/turn-endings.js";
import type { Decision } from "../persistence/transact.js";
import type { SessionLease, TurnPersistence } from "../persistence/turn-persistence.js";
import type { Clock } from "../ports/clock.js";
import type { LlmProvider } from "../ports/llm-provider.js";
import type { SessionDirectory } from "../ports/session-directory.js";
import type { Compactor } from "../reasoner/compactor.js";
import type { SessionKey, SessionRecord } from "../records/session-record.js";
import type { TurnRecord } from "../records/turn-record.js";
import type { Budgets } from "../usage/budgets.js";
import { sessionBusy, sessionNotFound } from "./entry-failures.js";
import { transactSession } from "./transact-session.js";

/**
 * `POST /v1/sessions/:sessionId/compact` (docs/context-window.md): the conversation compacted now, between turns, under the
 * session's lease (SESSION_BUSY while a turn is open). The summary's call is kept with the session's last turn,
 * whose calls and usage count it; like a turn's calls, it is judged against the budget and counts toward the
 * request's LLM calls.
 */
export class SessionCompaction {
  constructor(
    private readonly persistence: TurnPersistence,
    private readonly directory: Pick<SessionDirectory, "listMessageTurns">,
    private readonly catalog: Pick<AgentCatalog, "conversationContext" | "modes" | "toolsFor">,
    private readonly composition: Pick<CompositionStep, "systemMessage" | "cacheKey">,
    private readonly providers: ReadonlyMap<string, LlmProvider>,
    private readonly compactor: Compactor,
    private readonly clock: Clock,
    private readonly limits: {
      /** Judged before the summary's call; none when absent. */
      budgets?: Budgets;
      /** The summarising calls the request may make at most (`maxLlmCallsPerRequest`). */
      maxLlmCalls: number;
    },
  ) {}

  compact(key: SessionKey): Promise<InvokeResult<SessionCompacted>> {
    return transactSession(this.persistence, key, () => this.#decide(key));
  }

  /** Whether there is anything to compact, and the claim of the session's lease that compacts it. */
  async #decide(key: SessionKey): Promise<Decision<SessionCompacted>> {
    const notCompacted: Decision<SessionCompacted> = { type: "answer", answer: ok({ compacted: false }) };
    const session = await this.persistence.getSession(key);
    if (!session) return { type: "answer", answer: sessionNotFound(key.sessionId) };
    if (session.openTurnId !== null) return { type: "answer", answer: sessionBusy(key.sessionId) };
    // Nothing since the latest compaction (or none yet): a summary would only say it again, whatever is unsent.
    if (session.cursor.transcriptLength === (session.cursor.compactedTo ?? 0)) return notCompacted;
    const [last] = await this.directory.listMessageTurns(key, session.turnCount, 1);
    const turn = last && (await this.persistence.getTurn(key, last.turnId));
    const context = this.catalog.conversationContext(session.conversationContextId);
    const provider = context && this.providers.get(context.provider);
    if (!turn || !context || !provider) return notCompacted;
    const refused = await this.limits.budgets?.refusal(key.principal, "the conversation was not compacted.");
    if (refused) {
      await this.persistence.announceRefusal(key, refused);
      return { type: "answer", answer: refused };
    }
    return {
      type: "apply",
      change: { guard: "version", now: this.clock.now(), expectVersion: session.version },
      busy: sessionBusy(key.sessionId),
      applied: ({ lease }) => this.#compactUnder(lease, { session, turn, context, provider }),
    };
  }

  /** Compacts the conversation under the lease claimed for it, which it gives back. */
  async #compactUnder(
    lease: SessionLease,
    read: { session: SessionRecord; turn: TurnRecord; context: ConversationContext; provider: LlmProvider },
  ): Promise<InvokeResult<SessionCompacted>> {
    const { session, turn, context, provider } = read;
    const { key } = lease;
    const progress = { ...storedProgress(turn), cursor: session.cursor };
    const { cursor } = session;
    const done = await this.compactor.compact({
      lease,
      provider,
      context,
      system: this.composition.systemMessage(context, session.mode),
      principal: key.principal,
      sessionId: key.sessionId,
      turnId: turn.turnId,
      cursor,
      unsent: cursor.pendingInput,
      inTurn: false,
      // As the session's next call would be sent: the summary's call reads the conversation from the cache.
      calls: {
        tools: this.catalog.toolsFor(this.catalog.modes.get(session.mode)),
        cacheKey: this.composition.cacheKey(key),
      },
      reason: "manual",
      tokensBefore:
        (cursor.chainTokens ? cursor.chainTokens.input + cursor.chainTokens.output : 0) +
        countItemTokens(cursor.pendingInput),
      progress,
      maxCalls: this.limits.maxLlmCalls,
    });
    if (!done.successful || done.result === undefined) {
      await lease.release();
      return done.successful ? ok({ compacted: false }) : done;
    }
    // The turn counts the summary's call, so the next call of any turn is numbered after it.
    const counted = await lease.settle(turn.turnId, {
      llmCallCount: progress.llmCallCount,
      usage: progress.usage,
    });
    if (!counted.successful) return counted;
    const { tokensBefore, tokensAfter } = done.result.record;
    return ok({ compacted: true, tokensBefore, tokensAfter });
  }
}
