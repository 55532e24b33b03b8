import { type InvokeResult, ok } from "@aptix/contracts";
import type { AgentCatalog } from "../catalog/agent-catalog.js";
import { type ConversationContext, DEFAULT_RETRIEVAL_SETTINGS } from "../catalog/conversation-context.js";
import type { Mode } from "../catalog/mode.js";
import type { ContextRetriever } from "../ports/context-retriever.js";
import { type ConversationCursor, isFreshCursor } from "../records/conversation-cursor.js";
import type { LlmContinuation, LlmRequest } from "../records/llm-request.js";
import type { SessionKey, SessionRecord } from "../records/session-record.js";
import type { SystemMessageItem, TranscriptItem } from "../records/transcript-item.js";
import { withSystem } from "./compaction.js";
import { contextWindowOf, fitItem, RECENT_SHARE } from "./context-window.js";
import { composeRoundOpening, type OpenedRound, type RoundOpening } from "./round-opening.js";
import { sessionCacheKey } from "./session-cache-key.js";
import { modeInstructionsToTell } from "./user-message.js";

export interface CompositionInput {
  context: ConversationContext;
  /** Whose session the call is for: it names the request's `cacheKey`. */
  session: SessionKey;
  /** The turn's mode: it picks the tools and the forced tool choice (AGN-011 §4.4). */
  mode: Mode;
  /**
   * The session's mode now: the turn's until an `agent_change_mode` of the turn changed it. Every system
   * message the call sends holds its instructions.
   */
  currentModeId: string;
  cursor: ConversationCursor;
  /** The new items of this call: the round's opening (see `openRound`), or the outputs of the previous call's tool calls. */
  newItems: TranscriptItem[];
  /** The session's first `cursor.transcriptLength` transcript items, when `needsReplay` said so. */
  replay?: TranscriptItem[];
  /** The first LLM call of the user turn: only it gets the mode's forced tool choice. */
  firstCallOfTurn: boolean;
}

/** Whether the next call must replay the transcript rather than continue from a stored provider response. */
export function needsReplay(
  cursor: ConversationCursor,
  storesResponses: boolean,
  continuationLost: boolean,
): boolean {
  // Nothing since the latest compaction (or ever): nothing to replay.
  if (cursor.transcriptLength === (cursor.replayFrom ?? 0)) return false;
  return !storesResponses || continuationLost || cursor.responseId === null;
}

/**
 * Layer 1 — Composition (AGN-027 B): assembles everything the LLM sees. It calls nothing and loops on
 * nothing; adapters only translate its output into their wire format (docs/wire-mapping.md).
 */
export class CompositionStep {
  constructor(
    private readonly catalog: Pick<AgentCatalog, "toolsFor" | "modes">,
    /** Keys each session's prompt-cache key (see `sessionCacheKey`). */
    private readonly cacheKeySecret: Uint8Array,
    private readonly retriever?: ContextRetriever,
  ) {}

  /**
   * The new items of a round's first call, composed from what Entry received; `cursor` is where the round
   * starts, so a user turn knows which mode the model was last told about, its session's last workspace and
   * the chunks the provider already holds. `context` bounds the turn's `[CONTEXT]` block.
   */
  openRound(
    opening: RoundOpening,
    session: SessionRecord,
    cursor: ConversationCursor,
    context: ConversationContext,
  ): Promise<InvokeResult<OpenedRound>> {
    const modeInstructions = modeInstructionsToTell(cursor, this.catalog.modes.get(session.mode));
    return composeRoundOpening(opening, session, {
      cursor,
      retrieval: { ...DEFAULT_RETRIEVAL_SETTINGS, ...context.retrieval },
      ...(this.retriever ? { retriever: this.retriever } : {}),
      ...(modeInstructions !== undefined ? { modeInstructions } : {}),
    });
  }

  /** The session's prompt-cache key: the same on every call of its conversation, its summaries' included. */
  cacheKey(session: SessionKey): string {
    return sessionCacheKey(session, this.cacheKeySecret);
  }

  /**
   * The system message of a call: the boot prompt and the current mode's instructions. Whenever one is sent again
   * (a replay, re-sent pending input, a compacted chain), it is this one: a stateless provider's `system` never
   * keeps those of a mode the session has left.
   */
  systemMessage(context: ConversationContext, currentModeId: string): SystemMessageItem {
    const currentMode = this.catalog.modes.get(currentModeId);
    return {
      type: "system_message",
      text: currentMode.instructions
        ? `${context.bootPrompt}\n\n${currentMode.instructions}`
        : context.bootPrompt,
    };
  }

  async run(input: CompositionInput): Promise<InvokeResult<LlmRequest>> {
    const { context, mode, cursor } = input;
    // The boot prompt goes once per session (AGN-003 §2); later calls continue from what the provider has.
    const system = this.systemMessage(context, input.currentModeId);
    const withCurrentSystem = (items: TranscriptItem[]) => withSystem(items, system);
    // A single item larger than a quarter of the window is cut when sent (docs/context-window.md); the store keeps it whole.
    const maxItemTokens = Math.floor(contextWindowOf(context).tokens * RECENT_SHARE);
    const fitted = (items: TranscriptItem[]) => items.map((item) => fitItem(item, maxItemTokens));
    const continuation: LlmContinuation = input.replay
      ? { type: "replay", items: withCurrentSystem(input.replay) }
      : cursor.responseId !== null
        ? { type: "previous_response", responseId: cursor.responseId }
        : { type: "none" };
    // A forced tool applies to the turn's first call only: forcing it again after its output would
    // loop until the iteration limit (the reason the OpenAI Agents SDK resets tool_choice after a tool use).
    const forced = input.firstCallOfTurn && mode.toolChoice !== null;
    const request: LlmRequest = {
      model: context.model,
      continuation,
      input: [
        ...(isFreshCursor(cursor) ? [system] : []),
        ...fitted(withCurrentSystem(cursor.pendingInput)),
        ...fitted(input.newItems),
      ],
      // The turn's mode, so the tools hold for the whole reasoner loop (AGN-011 §4.4).
      tools: this.catalog.toolsFor(mode),
      toolChoice: forced && mode.toolChoice ? { type: "tool", name: mode.toolChoice } : { type: "auto" },
      cacheKey: this.cacheKey(input.session),
    };
    if (context.maxOutputTokens !== undefined) request.maxOutputTokens = context.maxOutputTokens;
    return ok(request);
  }
}
