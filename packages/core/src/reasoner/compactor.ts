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
import type { LlmProvider } from "../ports/llm-provider.js";
import { type TurnObserver, unobserved } from "../ports/turn-observer.js";
import type { CompactionReason, CompactionRecord } from "../records/compaction-record.js";
import type { ConversationCursor } from "../records/conversation-cursor.js";
import type { SystemMessageItem, TranscriptItem } from "../records/transcript-item.js";
import { addUsage, type TurnProgress } from "../records/turn-progress.js";
import { callRecord } from "./call-record.js";
import type { RoundLease } from "./round-lease.js";

/** The summary's share of the window, and its cap: room for the summary, never most of the window. */
const SUMMARY_SHARE = 0.1;
const MAX_SUMMARY_TOKENS = 8_192;

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
  /** The most tokens the recent turns kept verbatim may take. */
  recentTokens: number;
  /** The turn's progress: the summary's call counts in its calls and usage. */
  progress: TurnProgress;
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
    const maxItemTokens = Math.floor(window.tokens * RECENT_SHARE);
    const maxOutputTokens = Math.min(MAX_SUMMARY_TOKENS, Math.floor(window.tokens * SUMMARY_SHARE));
    const request = summaryRequest({
      model: window.compactionModel,
      source,
      unsent: input.unsent,
      budgetTokens: window.tokens - maxOutputTokens,
      maxItemTokens,
      maxOutputTokens,
    });
    const startedAt = this.clock.now();
    const answered = await this.llmCall.run({
      provider: input.provider,
      request,
      options: input.signal ? { signal: input.signal } : {},
    });
    const call = callRecord({
      principal: input.principal,
      sessionId: input.sessionId,
      turnId: input.turnId,
      index: progress.llmCallCount,
      request,
      startedAt,
      endedAt: this.clock.now(),
      answered,
    });
    progress.llmCallCount += 1;
    if (!answered.successful) {
      const kept = await input.lease.recordLlmCall(call, undefined, true);
      if (!kept.successful) return kept;
      return fail(
        "PROVIDER_ERROR",
        `The conversation could not be compacted: ${answered.errors[0].message}`,
        {
          ...answered.errors[0].details,
          compaction: input.reason,
        },
      );
    }
    progress.usage = addUsage(progress.usage, answered.result.usage);
    const summary = answered.result.text.trim();
    const items = compactedItems({
      system: input.system,
      summary: summary === "" ? "(The summary came back empty.)" : summary,
      source,
      keepLastTurn: input.inTurn,
      recentTokens: input.recentTokens,
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
