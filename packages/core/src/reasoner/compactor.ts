import { fail, type InvokeResult, ok } from "@aptix/contracts";
import type { ConversationContext } from "../catalog/conversation-context.js";
import { compactedItems, compactionSource, summaryRequest } from "../composition/compaction.js";
import {
  type ContextWindow,
  contextWindowOf,
  countItemTokens,
  RECENT_SHARE,
} from "../composition/context-window.js";
import type { LlmCallStep } from "../llm-call/llm-call-step.js";
import type { Clock } from "../ports/clock.js";
import { isContextOverflow, type LlmProvider } from "../ports/llm-provider.js";
import { type TurnObserver, unobserved } from "../ports/turn-observer.js";
import type { CompactionReason, CompactionRecord } from "../records/compaction-record.js";
import type { ConversationCursor } from "../records/conversation-cursor.js";
import type { LlmCallRecord } from "../records/llm-call-record.js";
import type { SystemMessageItem, TranscriptItem } from "../records/transcript-item.js";
import { addUsage, type TurnProgress } from "../records/turn-progress.js";
import { callRecord } from "./call-record.js";
import type { RoundLease } from "./round-lease.js";

/** The summary's share of what a call may take, and its cap: room for the summary, never most of the window. */
const SUMMARY_SHARE = 0.1;
const MAX_SUMMARY_TOKENS = 8_192;
/** Summarising calls a compaction makes at most, each on half as much as the one the provider refused. */
const SUMMARY_ATTEMPTS = 3;

/** What a compaction is told of where it happens. */
export interface CompactionInput {
  lease: RoundLease;
  provider: LlmProvider;
  context: ConversationContext;
  /** The system message the compacted chain starts with (the boot prompt and the current mode's instructions). */
  system: SystemMessageItem;
  principal: string;
  sessionId: string;
  /**
   * The turn it happens in (between turns, the last one): the summary's call is kept with its calls, and
   * `progress` is that turn's.
   */
  turnId: string;
  cursor: ConversationCursor;
  /** The round's items the provider has not seen: its pending input and the call's new items. */
  unsent: readonly TranscriptItem[];
  /** The round is in the middle of the last turn: its calls wait for `unsent`, so that turn is kept whole. */
  inTurn: boolean;
  reason: CompactionReason;
  /** The estimate of the call it makes room for. */
  tokensBefore: number;
  /**
   * For an overflow: the estimated size of the call the provider refused, when known. The recent turns kept then
   * fit in a quarter of it, and the summary's call in half of it.
   */
  refusedTokens?: number;
  /** The turn's progress: the summary's call counts in its calls and usage. */
  progress: TurnProgress;
  /** The summarising calls it may make at most: what is left of the request's LLM calls. */
  maxCalls: number;
  signal?: AbortSignal;
}

/** A compaction done: the compacted chain's cursor and what the record says of it. */
export interface Compacted {
  cursor: ConversationCursor;
  record: CompactionRecord;
  /** The compacted chain's estimate, with what the round sends next (`record.tokensAfter`). */
  tokensAfter: number;
}

/**
 * Compaction (DESIGN §15): one summarising LLM call over the conversation since the latest compaction, then a
 * new provider chain that starts from the system message, the summary and the recent turns that fit, appended
 * to the transcript (which keeps every item) and named by the new cursor, with the compaction record, in one
 * write under the lease. A crash before that write leaves nothing, so the round run again compacts again.
 */
export class Compactor {
  constructor(
    private readonly llmCall: LlmCallStep,
    private readonly clock: Clock,
    private readonly observer: TurnObserver = unobserved,
  ) {}

  /** The window of `context`: what the Reasoner estimates against. */
  windowOf(context: ConversationContext): ContextWindow {
    return contextWindowOf(context);
  }

  /** Compacts, or answers undefined when there is nothing to compact (no turn since the latest compaction). */
  compact(input: CompactionInput): Promise<InvokeResult<Compacted | undefined>> {
    return this.observer.compaction(
      {
        reason: input.reason,
        provider: input.provider.id,
        model: contextWindowOf(input.context).compactionModel,
        tokensBefore: input.tokensBefore,
      },
      () => this.#compact(input),
    );
  }

  async #compact(input: CompactionInput): Promise<InvokeResult<Compacted | undefined>> {
    const { cursor, context, progress } = input;
    const window = contextWindowOf(context);
    const from = cursor.replayFrom ?? 0;
    const transcript = await input.lease.loadTranscript(cursor.transcriptLength, from);
    const source = compactionSource(transcript);
    // Nothing happened since the latest compaction: a summary would only say it again.
    const untouched = cursor.transcriptLength === (cursor.compactedTo ?? 0) || source.turns.length === 0;
    if (untouched && input.unsent.length === 0) return ok(undefined);
    // What the provider took: the window, or, after it refused a call, less than that call (its size when known,
    // else the chain counted here, as a chain older than its estimate): the configured window is too large.
    const refused =
      input.reason === "overflow"
        ? (input.refusedTokens ?? countItemTokens(transcript) + countItemTokens(input.unsent))
        : undefined;
    const limit = refused === undefined ? window.tokens : Math.min(window.tokens, Math.floor(refused / 2));
    const recentTokens = Math.floor((refused ?? window.tokens) * RECENT_SHARE);
    const maxItemTokens = Math.floor(limit * RECENT_SHARE);
    let answered: Awaited<ReturnType<LlmCallStep["run"]>> | undefined;
    let summaryCall: LlmCallRecord | undefined;
    let budget = limit;
    // The summary's own call may be refused as too long too: asked again on half as much, a few times.
    const attempts = Math.min(SUMMARY_ATTEMPTS, input.maxCalls);
    for (let attempt = 0; attempt < attempts; attempt++, budget = Math.floor(budget / 2)) {
      const maxOutputTokens = Math.min(MAX_SUMMARY_TOKENS, Math.floor(budget * SUMMARY_SHARE));
      // No cache key: nothing sends this prompt again, so a provider's cache would only be written.
      const request = summaryRequest({
        model: window.compactionModel,
        source,
        budgetTokens: budget - maxOutputTokens,
        maxItemTokens,
        maxOutputTokens,
      });
      const startedAt = this.clock.now();
      answered = await this.llmCall.run({
        provider: input.provider,
        request,
        options: input.signal ? { signal: input.signal } : {},
      });
      const call = callRecord({
        principal: input.principal,
        sessionId: input.sessionId,
        turnId: input.turnId,
        index: progress.llmCallCount,
        provider: input.provider.id,
        request,
        startedAt,
        endedAt: this.clock.now(),
        answered,
      });
      progress.llmCallCount += 1;
      if (answered.successful) {
        summaryCall = call;
        break;
      }
      const kept = await input.lease.recordLlmCall(call, undefined, true);
      if (!kept.successful) return kept;
      if (!isContextOverflow(answered)) break;
    }
    if (answered === undefined || !answered.successful || summaryCall === undefined) {
      const error = answered?.errors[0];
      return fail(
        "PROVIDER_ERROR",
        `The conversation could not be compacted: ${error?.message ?? "no answer"}`,
        {
          ...error?.details,
          compaction: input.reason,
        },
      );
    }
    const call = summaryCall;
    progress.usage = addUsage(progress.usage, answered.result.usage);
    const summary = answered.result.text.trim();
    const items = compactedItems({
      system: input.system,
      summary: summary === "" ? "(The summary came back empty.)" : summary,
      source,
      keepLastTurn: input.inTurn,
      recentTokens,
      maxItemTokens,
    });
    const chain = countItemTokens(items);
    const compacted: ConversationCursor = {
      responseId: null,
      pendingInput: cursor.pendingInput,
      transcriptLength: cursor.transcriptLength + items.length,
      replayFrom: cursor.transcriptLength,
      compactedTo: cursor.transcriptLength + items.length,
      chainTokens: { input: chain, output: 0 },
      // The provider holds the mode it was told and the workspace; the chunks sent before are summarised away.
      ...(cursor.mode !== undefined ? { mode: cursor.mode } : {}),
      ...(cursor.workspaceId !== undefined ? { workspaceId: cursor.workspaceId } : {}),
    };
    const record: CompactionRecord = {
      principal: input.principal,
      sessionId: input.sessionId,
      turnId: input.turnId,
      reason: input.reason,
      summary,
      tokensBefore: input.tokensBefore,
      tokensAfter: chain + countItemTokens(input.unsent),
      fromPosition: cursor.transcriptLength,
      createdAt: this.clock.now(),
    };
    const kept = await input.lease.recordCompaction(
      call,
      { items, fromPosition: cursor.transcriptLength, cursor: compacted },
      record,
    );
    if (!kept.successful) return kept;
    progress.cursor = compacted;
    return ok({ cursor: compacted, record, tokensAfter: record.tokensAfter });
  }
}
