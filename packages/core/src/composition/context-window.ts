import type { ConversationContext } from "../catalog/conversation-context.js";
import type { ContentPart, TranscriptItem } from "../records/transcript-item.js";
import { estimateTokens, startWithinTokens } from "./token-estimate.js";

/** `compactAtRatio` when a context sets none: compaction starts at 80 % of the window. */
const DEFAULT_COMPACT_AT_RATIO = 0.8;
/** The share of the window the recent turns kept verbatim by a compaction may take, and the most one item may. */
export const RECENT_SHARE = 0.25;
/** What an item costs beyond its text (roles, separators), as providers count it, roughly. */
const ITEM_OVERHEAD_TOKENS = 4;
/** What an image or a file part is counted as: its bytes are not text, and providers bill them apart. */
const ATTACHMENT_TOKENS = 1_000;

/** The window of a conversation context: how many tokens its model takes, and when compaction starts. */
export interface ContextWindow {
  tokens: number;
  /** `compactAtRatio × tokens`: an estimate past it compacts before the call. */
  compactAt: number;
  /** The model that writes the summary. */
  compactionModel: string;
}

/** The windows of the model families when the context sets none (docs/context-window.md). */
const WINDOWS_BY_MODEL: ReadonlyArray<[RegExp, number]> = [
  [/^gpt-5/, 400_000],
  [/^gpt-4\.1/, 1_047_576],
  [/^claude-/, 200_000],
];
const DEFAULT_WINDOW_TOKENS = 128_000;

export function contextWindowOf(
  context: Pick<ConversationContext, "model" | "contextWindowTokens" | "compactAtRatio" | "compactionModel">,
): ContextWindow {
  const tokens =
    context.contextWindowTokens ??
    WINDOWS_BY_MODEL.find(([pattern]) => pattern.test(context.model))?.[1] ??
    DEFAULT_WINDOW_TOKENS;
  return {
    tokens,
    compactAt: Math.floor(tokens * (context.compactAtRatio ?? DEFAULT_COMPACT_AT_RATIO)),
    compactionModel: context.compactionModel ?? context.model,
  };
}

/** The o200k tokens of the items as a provider would see them, roughly: their texts, plus a little per item. */
export function countItemTokens(items: readonly TranscriptItem[]): number {
  let tokens = 0;
  for (const item of items) tokens += ITEM_OVERHEAD_TOKENS + textTokens(item);
  return tokens;
}

function textTokens(item: TranscriptItem): number {
  switch (item.type) {
    case "system_message":
    case "assistant_message":
      return estimateTokens(item.text);
    case "user_message":
      return item.content.reduce((sum, part) => sum + partTokens(part), 0);
    case "function_call":
      return estimateTokens(item.name) + estimateTokens(item.argumentsJson);
    case "function_call_output":
      return estimateTokens(item.output);
    case "reasoning":
      return 0;
  }
}

function partTokens(part: ContentPart): number {
  return part.type === "text" ? estimateTokens(part.text) : ATTACHMENT_TOKENS;
}

/**
 * The item as sent when one text of it is larger than `maxTokens`: that text cut to fit, with a line saying
 * how much was cut (the store keeps what the client or tool gave whole). The item itself when all fit.
 */
export function fitItem(item: TranscriptItem, maxTokens: number): TranscriptItem {
  if (item.type === "function_call_output") {
    const output = fitText(item.output, maxTokens);
    return output === item.output ? item : { ...item, output };
  }
  if (item.type === "user_message") {
    let changed = false;
    const content = item.content.map((part) => {
      if (part.type !== "text") return part;
      const text = fitText(part.text, maxTokens);
      if (text === part.text) return part;
      changed = true;
      return { ...part, text };
    });
    return changed ? { ...item, content } : item;
  }
  return item;
}

/** `text` cut to `maxTokens` tokens with the line that says so, or `text` itself when it fits. */
function fitText(text: string, maxTokens: number): string {
  // Cheap first: a text of fewer characters than tokens allowed fits whatever it holds.
  if (text.length <= maxTokens) return text;
  if (estimateTokens(text) <= maxTokens) return text;
  const notice = (cut: number) => `\n[… ${cut} characters cut to fit the context window]`;
  const kept = startWithinTokens(text, Math.max(0, maxTokens - estimateTokens(notice(text.length))));
  return kept + notice(text.length - kept.length);
}
