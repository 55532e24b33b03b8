import { fail, type InvokeResult, ok } from "@aptix/contracts";
import type { ConversationContext } from "../catalog/conversation-context.js";
import {
  type CompactionSource,
  compactedItems,
  compactionSource,
  hasUnansweredCalls,
  heldSummaryRequest,
  instructionTokens,
  renderedSummaryRequest,
  withSystem,
} from "../composition/compaction.js";
import {
  type ContextWindow,
  contextWindowOf,
  countItemTokens,
  fitItem,
  RECENT_SHARE,
} from "../composition/context-window.js";
import type { LlmCallStep } from "../llm-call/llm-call-step.js";
import type { Clock } from "../ports/clock.js";
import {
  isContextOverflow,
  isContinuationLost,
  type LlmCallResult,
  type LlmProvider,
} from "../ports/llm-provider.js";
import { type TurnObserver, unobserved } from "../ports/turn-observer.js";
import type { CompactionReason, CompactionRecord } from "../records/compaction-record.js";
import type { ConversationCursor } from "../records/conversation-cursor.js";
import type { LlmCallRecord } from "../records/llm-call-record.js";
import type { LlmRequest } from "../records/llm-request.js";
import type { LlmResponse } from "../records/llm-response.js";
import type { SystemMessageItem, TranscriptItem } from "../records/transcript-item.js";
import { addUsage, type TurnProgress } from "../records/turn-progress.js";
import type { RoundLease } from "./round-lease.js";
import { tracedCall } from "./traced-call.js";

/** The summary's share of what a call may take, and its cap: room for the summary, never most of the window. */
const SUMMARY_SHARE = 0.1;
const MAX_SUMMARY_TOKENS = 8_192;
/** Rendered summarising calls the provider may refuse as too long, each one on half as much as the last. */
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
  /**
   * How the session's calls are sent (their tools and cache key): the summarising call sends the conversation
   * with the same, so the provider's prompt cache serves it.
   */
  calls: Pick<LlmRequest, "tools" | "cacheKey">;
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
 * Compaction (docs/context-window.md): one summarising LLM call over the conversation since the latest compaction, then a
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
    const { cursor } = input;
    const transcript = await input.lease.loadTranscript(cursor.transcriptLength, cursor.replayFrom ?? 0);
    const source = compactionSource(transcript);
    // Nothing happened since the latest compaction: a summary would only say it again.
    const untouched = cursor.transcriptLength === (cursor.compactedTo ?? 0) || source.turns.length === 0;
    if (untouched && input.unsent.length === 0) return ok(undefined);
    const room = summaryRoom(input, transcript);
    // First as the provider holds the conversation, which its prompt cache serves; rendered when that would not fit.
    const held =
      input.reason === "overflow" || source.turns.length === 0
        ? undefined
        : heldRequest(input, transcript, room.limit, room.maxItemTokens);
    const summarised = await this.#summarise(input, source, room, held);
    if (!summarised.successful) return summarised;
    return this.#restart(input, { ...summarised.result, source, ...room });
  }

  /** The summary, from the first summarising call that writes one, and that call's trace. */
  async #summarise(
    input: CompactionInput,
    source: CompactionSource,
    room: SummaryRoom,
    held: LlmRequest | undefined,
  ): Promise<InvokeResult<{ call: LlmCallRecord; summary: string }>> {
    const model = contextWindowOf(input.context).compactionModel;
    let attempt: SummaryAttempt = { held, budget: room.limit, refusals: 0, retried: false };
    // Every attempt is one of the request's LLM calls: it stops at what is left of them.
    for (let calls = 0; calls < input.maxCalls; calls++) {
      const { budget } = attempt;
      const request =
        attempt.held ??
        renderedSummaryRequest({
          model,
          source,
          budgetTokens: budget - summaryTokens(budget),
          maxItemTokens: room.maxItemTokens,
          maxOutputTokens: summaryTokens(budget),
        });
      const { answered, record: call } = await tracedCall({
        llmCall: this.llmCall,
        clock: this.clock,
        provider: input.provider,
        request,
        options: input.signal ? { signal: input.signal } : {},
        turn: { principal: input.principal, sessionId: input.sessionId, turnId: input.turnId },
        progress: input.progress,
      });
      if (answered.successful) input.progress.usage = addUsage(input.progress.usage, answered.result.usage);
      const summary = answered.successful ? summaryOf(answered.result) : undefined;
      if (summary !== undefined) return ok({ call, summary });
      const kept = await input.lease.recordLlmCall(call, undefined, true);
      if (!kept.successful) return kept;
      const next = nextAttempt(attempt, answered, input.reason);
      if (!next.successful) return next;
      attempt = next.result;
    }
    return notCompacted(input.reason, "the request's LLM calls are used up.");
  }

  /** The compacted chain from `summary`, kept with the call that wrote it and the compaction record, in one write. */
  async #restart(
    input: CompactionInput,
    made: {
      call: LlmCallRecord;
      summary: string;
      source: CompactionSource;
      recentTokens: number;
      maxItemTokens: number;
    },
  ): Promise<InvokeResult<Compacted>> {
    const { cursor, progress } = input;
    const { call, summary } = made;
    const items = compactedItems({
      system: input.system,
      summary,
      source: made.source,
      keepLastTurn: input.inTurn,
      recentTokens: made.recentTokens,
      maxItemTokens: made.maxItemTokens,
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

/** What a compaction may take: the summarising call's tokens, the recent turns kept, and any one item. */
interface SummaryRoom {
  limit: number;
  recentTokens: number;
  maxItemTokens: number;
}

/**
 * What the provider took: the window, or, after it refused a call, less than that call (its size when known,
 * else the chain counted here, as a chain older than its estimate): the configured window is too large.
 */
function summaryRoom(input: CompactionInput, transcript: readonly TranscriptItem[]): SummaryRoom {
  const window = contextWindowOf(input.context);
  const refused =
    input.reason === "overflow"
      ? (input.refusedTokens ?? countItemTokens(transcript) + countItemTokens(input.unsent))
      : undefined;
  const limit = refused === undefined ? window.tokens : Math.min(window.tokens, Math.floor(refused / 2));
  return {
    limit,
    recentTokens: Math.floor((refused ?? window.tokens) * RECENT_SHARE),
    maxItemTokens: Math.floor(limit * RECENT_SHARE),
  };
}

/** How the next summarising call is asked: on the held conversation, or rendered within `budget`. */
interface SummaryAttempt {
  held: LlmRequest | undefined;
  budget: number;
  /** Rendered calls refused as too long so far. */
  refusals: number;
  /** A call already answered without a summary. */
  retried: boolean;
}

/** After a call that wrote no summary: how the next is asked, or the compaction's failure. */
function nextAttempt(
  attempt: SummaryAttempt,
  answered: LlmCallResult,
  reason: CompactionReason,
): InvokeResult<SummaryAttempt> {
  if (answered.successful) {
    // No text, or a tool call: no summary, so the transcript stays as it is. Asked once more, rendered without
    // tools, so the answer can only be text.
    if (attempt.retried) return notCompacted(reason, "the summary came back empty.");
    return ok({ ...attempt, held: undefined, retried: true });
  }
  // The held conversation was too long after all, or the provider lost the response it continues: rendered.
  if (attempt.held !== undefined && (isContextOverflow(answered) || isContinuationLost(answered))) {
    return ok({ ...attempt, held: undefined });
  }
  // The summary's own call may be refused as too long too: asked again on half as much, a few times.
  const refusals = attempt.refusals + 1;
  if (!isContextOverflow(answered) || refusals >= SUMMARY_ATTEMPTS) {
    const [error] = answered.errors;
    return fail("PROVIDER_ERROR", `The conversation could not be compacted: ${error.message}`, {
      ...error.details,
      compaction: reason,
    });
  }
  return ok({ ...attempt, refusals, budget: Math.floor(attempt.budget / 2) });
}

function notCompacted(reason: CompactionReason, why: string) {
  return fail("PROVIDER_ERROR", `The conversation could not be compacted: ${why}`, { compaction: reason });
}

/** The cap of a summary in a call of `budget` tokens. */
function summaryTokens(budget: number): number {
  return Math.min(MAX_SUMMARY_TOKENS, Math.floor(budget * SUMMARY_SHARE));
}

/** The answer's summary: its text, when it has some and calls no tool; undefined when it is no summary. */
function summaryOf(response: LlmResponse): string | undefined {
  const text = response.text.trim();
  return text === "" || response.toolCalls.length > 0 ? undefined : text;
}

/**
 * The summarising call on the conversation as the provider holds it (`heldSummaryRequest`), or undefined when
 * that would not fit in `limit` with the summary, or would leave a tool call unanswered. The round's unsent items
 * go with it only in the middle of a turn, where they are the outputs the held calls wait for; otherwise they
 * go to the new chain alone.
 */
function heldRequest(
  input: CompactionInput,
  transcript: readonly TranscriptItem[],
  limit: number,
  maxItemTokens: number,
): LlmRequest | undefined {
  const { cursor, provider } = input;
  const answers = input.inTurn
    ? withSystem(input.unsent, input.system).map((item) => fitItem(item, maxItemTokens))
    : [];
  if (hasUnansweredCalls([...transcript, ...answers])) return undefined;
  const chain = cursor.chainTokens
    ? cursor.chainTokens.input + cursor.chainTokens.output
    : countItemTokens(transcript);
  const maxOutputTokens = summaryTokens(limit);
  if (chain + countItemTokens(answers) + instructionTokens() + maxOutputTokens > limit) return undefined;
  return heldSummaryRequest({
    model: contextWindowOf(input.context).compactionModel,
    continuation:
      provider.storesResponses && cursor.responseId !== null
        ? { type: "previous_response", responseId: cursor.responseId }
        : { type: "replay", items: withSystem(transcript, input.system) },
    answers,
    calls: input.calls,
    maxOutputTokens,
  });
}
