import type { LlmRequest } from "../records/llm-request.js";
import type { SystemMessageItem, TranscriptItem, UserMessageItem } from "../records/transcript-item.js";
import { countItemTokens, fitItem } from "./context-window.js";

/**
 * The last input of every summarising call (docs/context-window.md keeps it too): what a summary must keep so the
 * conversation goes on as if nothing was cut.
 */
export const SUMMARY_INSTRUCTION = [
  "Summarise the conversation above so that you can continue it from your summary alone: the earlier messages",
  "will be gone. Write it for yourself, in plain prose and short lists, under these headings:",
  "1. Goals and constraints: what the user wants, and every requirement, preference and limit they stated.",
  "2. Decisions: what was decided and why, including approaches tried and rejected.",
  "3. Files touched: every path read, created or changed, and what changed in it.",
  "4. Errors met: each error or failure, and whether and how it was resolved.",
  "5. Open tasks: what is still to do, in order, and what you were doing last.",
  "6. Facts to keep verbatim: every identifier, path, name, number, value, command and snippet the user gave or",
  "   the work depends on, copied exactly.",
  "Keep earlier summaries' content unless it no longer holds. Do not call tools. Answer with the summary only.",
].join("\n");

/** The opening of the message that carries a summary into a new provider chain. */
const SUMMARY_HEADER = "[CONVERSATION SUMMARY]";

const SUMMARISER_PROMPT =
  "You write the summary of a conversation between a user and a coding agent, so the agent can go on from it.";

/**
 * The transcript since the latest compaction, split: the summary it starts from (none before a first compaction)
 * and the turns since, each from its user message on. A turn's items are whole: its calls with their outputs.
 */
export interface CompactionSource {
  summary?: string;
  turns: TranscriptItem[][];
}

/** `items` (the transcript from the cursor's `replayFrom`) as the summary they start from and their turns. */
export function compactionSource(items: readonly TranscriptItem[]): CompactionSource {
  let rest = items;
  let summary: string | undefined;
  const [first, second] = items;
  if (first?.type === "system_message") {
    rest = items.slice(1);
    const text = second?.type === "user_message" ? summaryOf(second) : undefined;
    if (text !== undefined) {
      summary = text;
      rest = items.slice(2);
    }
  }
  const turns: TranscriptItem[][] = [];
  for (const item of rest) {
    if (item.type === "system_message") continue;
    if (item.type === "user_message" || turns.length === 0) turns.push([]);
    turns.at(-1)?.push(item);
  }
  return summary === undefined ? { turns } : { summary, turns };
}

/** The summary a `[CONVERSATION SUMMARY]` message carries; undefined for any other message. */
function summaryOf(message: UserMessageItem): string | undefined {
  const [part] = message.content;
  if (message.content.length !== 1 || part?.type !== "text" || !part.text.startsWith(`${SUMMARY_HEADER}\n`)) {
    return undefined;
  }
  return part.text.slice(SUMMARY_HEADER.length + 1);
}

/** The least a text is cut to when a conversation is squeezed into a summary's call. */
const MIN_ITEM_TOKENS = 64;

/**
 * The summarising call: the conversation since the latest compaction (its summary first) rendered as text in one
 * message, then the fixed instruction; no tools. Rendered, it is the same request for every provider and needs
 * no tool definition. The items not sent yet are not in it: they go to the new chain as they are. To fit in
 * `budgetTokens`, long texts (tool outputs, pasted files) are cut shorter first, down to a few lines each, so
 * every turn's instruction stays; only then are the oldest turns left out. The earlier summary always stays.
 */
export function summaryRequest(input: {
  model: string;
  source: CompactionSource;
  budgetTokens: number;
  maxItemTokens: number;
  maxOutputTokens: number;
}): LlmRequest {
  const { source } = input;
  const fixed = countItemTokens([message(SUMMARISER_PROMPT), message(SUMMARY_INSTRUCTION)]);
  let budget = input.budgetTokens - fixed - (source.summary ? countItemTokens([message(source.summary)]) : 0);
  let turns: TranscriptItem[][] = [];
  for (let itemTokens = input.maxItemTokens; ; itemTokens = Math.floor(itemTokens / 2)) {
    turns = source.turns.map((turn) => turn.map((item) => fitItem(item, itemTokens)));
    if (countItemTokens(turns.flat()) <= budget || itemTokens / 2 < MIN_ITEM_TOKENS) break;
  }
  const kept: TranscriptItem[][] = [];
  for (const turn of [...turns].reverse()) {
    const tokens = countItemTokens(turn);
    if (tokens > budget && kept.length > 0) break;
    kept.unshift(turn);
    budget -= tokens;
  }
  const rendered = [
    ...(source.summary ? [`[EARLIER SUMMARY]\n${source.summary}`] : []),
    ...(kept.length < turns.length ? [`[${turns.length - kept.length} earlier turns left out]`] : []),
    ...kept.flat().flatMap(render),
  ].join("\n\n");
  return {
    model: input.model,
    continuation: { type: "none" },
    input: [
      { type: "system_message", text: SUMMARISER_PROMPT },
      message(`[CONVERSATION]\n\n${rendered}`),
      message(SUMMARY_INSTRUCTION),
    ],
    tools: [],
    toolChoice: { type: "auto" },
    maxOutputTokens: input.maxOutputTokens,
  };
}

/**
 * What a compacted chain starts from: the system message, the summary, then the newest whole turns verbatim while
 * they fit in `recentTokens` (the last one always, when the round is in the middle of it: its calls wait for the
 * outputs about to be sent), each text at most `maxItemTokens`.
 */
export function compactedItems(input: {
  system: SystemMessageItem;
  summary: string;
  source: CompactionSource;
  keepLastTurn: boolean;
  recentTokens: number;
  maxItemTokens: number;
}): TranscriptItem[] {
  const turns = input.source.turns.map((turn) => turn.map((item) => fitItem(item, input.maxItemTokens)));
  let budget = input.recentTokens;
  const kept: TranscriptItem[][] = [];
  for (const [index, turn] of [...turns].reverse().entries()) {
    const tokens = countItemTokens(turn);
    const mustKeep = index === 0 && input.keepLastTurn;
    if (tokens > budget && !mustKeep) break;
    kept.unshift(turn);
    budget -= tokens;
  }
  return [input.system, message(`${SUMMARY_HEADER}\n${input.summary}`), ...kept.flat()];
}

function message(text: string): UserMessageItem {
  return { type: "user_message", content: [{ type: "text", text }] };
}

/** One item as the summariser reads it. */
function render(item: TranscriptItem): string[] {
  switch (item.type) {
    case "user_message":
      return [
        `[USER]\n${item.content
          .map((part) =>
            part.type === "text"
              ? part.text
              : part.type === "image"
                ? "(an image)"
                : `(a file: ${part.fileName})`,
          )
          .join("\n")}`,
      ];
    case "assistant_message":
      return [`[ASSISTANT]\n${item.text}`];
    case "function_call":
      return [`[TOOL CALL ${item.name}] ${item.argumentsJson}`];
    case "function_call_output":
      return [`[TOOL ${item.isError ? "ERROR" : "RESULT"}]\n${item.output}`];
    case "system_message":
    case "reasoning":
      return [];
  }
}
