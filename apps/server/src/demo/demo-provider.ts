import { createHash } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import {
  type FunctionCallOutputItem,
  fail,
  type LlmCallOptions,
  type LlmCallResult,
  type LlmProvider,
  type LlmRequest,
  type LlmResponse,
  type LlmToolCall,
  ok,
  type TranscriptItem,
} from "@aptix/core";

/** The provider id of the demo's conversation context. */
export const DEMO_PROVIDER_ID = "demo";

/** How long the demo waits between two streamed words: slow enough to watch an answer arrive. */
const WORD_DELAY_MS = 60;
/** The longest a file's text the demo quotes in an answer. */
const QUOTED_CHARS = 200;

/** A path-like word of an instruction: `src/app.ts`, `README.md`, `./docs/`. */
const PATH = /(?:\.{0,2}\/)?[\w@-]+(?:[./][\w@-]+)*\.[a-z][\w]{0,5}\b|(?:\.{0,2}\/)?[\w@.-]+\/[\w@./-]*/i;
/** A file name to write: `notes.md`, `report.txt`. */
const FILE_NAME = /\b[\w-]+\.(md|txt|json|csv|html)\b/i;
const WRITE = /\b(write|create|save|make)\b/i;
/**
 * The most of a text the patterns above read: their backtracking grows with the square of a long run of word
 * characters, and a request's text is the caller's.
 */
const SCANNED_CHARS = 4_000;
const MEDIA_TYPES: Record<string, string> = {
  md: "text/markdown",
  txt: "text/plain",
  json: "application/json",
  csv: "text/csv",
  html: "text/html",
};
/** What an exporting line of JavaScript or TypeScript names. */
const EXPORTED =
  /export\s+(?:default\s+)?(?:declare\s+)?(?:async\s+)?(?:const|let|var|function\*?|class|interface|type|enum)\s+([\w$]+)/g;

/**
 * The model of `pnpm demo` (APTIX_DEMO=1): a scripted stand-in for a provider, in the server's process, so a
 * first look needs no key and no network. It answers from the request alone, as a model would see it: it reads
 * the file an instruction names (the client's `read_file`), writes the file an instruction asks for (the server's
 * `create_file`, which asks the user first), summarises the conversation when compaction asks, and otherwise
 * repeats the instruction. Streamed answers come a word at a time. It stores nothing (`storesResponses: false`):
 * core sends it the whole conversation each call, as it does Anthropic.
 */
export class DemoProvider implements LlmProvider {
  readonly id = DEMO_PROVIDER_ID;
  readonly storesResponses = false;

  async call(request: LlmRequest, options: LlmCallOptions = {}): Promise<LlmCallResult> {
    const items = [
      ...(request.continuation.type === "replay" ? request.continuation.items : []),
      ...request.input,
    ];
    const answer = answerTo(items, new Set(request.tools.map((tool) => tool.name)));
    if (answer.text !== "" && options.onTextDelta) {
      try {
        for (const word of answer.text.match(/\S+\s*/g) ?? []) {
          await delay(WORD_DELAY_MS, undefined, options.signal ? { signal: options.signal } : {});
          options.onTextDelta(word);
        }
      } catch {
        // Only the signal rejects the delay: the turn was cancelled mid-answer.
        return fail("PROVIDER_ERROR", "The call to the demo model was cancelled.", {
          provider: DEMO_PROVIDER_ID,
          reason: "aborted",
        });
      }
    }
    const toolCalls = answer.toolCalls.map(({ name, input }) => {
      const argumentsJson = JSON.stringify(input);
      // The same conversation gets the same ids: the README's curl flow can name the call it will get.
      const id = createHash("sha256").update(`${items.length}\0${name}\0${argumentsJson}`).digest("hex");
      return { callId: `call_${id.slice(0, 12)}`, name, argumentsJson } satisfies LlmToolCall;
    });
    const output: TranscriptItem[] = [
      ...(answer.text === "" ? [] : [{ type: "assistant_message" as const, text: answer.text }]),
      ...toolCalls.map((call) => ({ type: "function_call" as const, ...call })),
    ];
    const response: LlmResponse = {
      output,
      text: answer.text,
      toolCalls,
      usage: { inputTokens: tokens(JSON.stringify(items)), outputTokens: tokens(JSON.stringify(output)) },
      finishReason: toolCalls.length > 0 ? "tool_calls" : "stop",
      trace: {
        providerRequest: { demo: true, model: request.model },
        providerResponse: { demo: true, output },
      },
    };
    return ok(response);
  }
}

interface DemoAnswer {
  text: string;
  toolCalls: Array<{ name: string; input: Record<string, unknown> }>;
}

function answerTo(items: readonly TranscriptItem[], tools: ReadonlySet<string>): DemoAnswer {
  const last = items.at(-1);
  if (last?.type === "function_call_output") {
    const outputs = items
      .slice(items.findLastIndex((item) => item.type !== "function_call_output") + 1)
      .filter((item) => item.type === "function_call_output");
    return { text: outputs.map((output) => aboutOutput(output, items)).join("\n\n"), toolCalls: [] };
  }
  // Compaction's summarising call: no tools, the conversation rendered in one message.
  if (tools.size === 0 && /\[CONVERSATION\]/.test(items.map(textOfItem).join("\n"))) {
    return { text: summaryOf(items), toolCalls: [] };
  }
  // The first part holds the instruction; the next ones the turn's `[CONTEXT]`, artifacts and solution context.
  const [first = "", ...rest] = last?.type === "user_message" ? partsOf(last) : [];
  const instruction = /\[INSTRUCTION\]\n([\s\S]*)/.exec(first)?.[1]?.trim() ?? first.trim();
  const scanned = instruction.slice(0, SCANNED_CHARS);
  const fileName = FILE_NAME.exec(scanned)?.[0];
  if (WRITE.test(scanned) && fileName && tools.has("create_file")) {
    const extension = fileName.split(".").pop()?.toLowerCase() ?? "txt";
    return {
      text: "",
      toolCalls: [
        {
          name: "create_file",
          input: {
            name: fileName,
            mimeType: MEDIA_TYPES[extension] ?? "text/plain",
            content: `Written by the Aptix demo model, asked: ${instruction}\n`,
            encoding: "utf8",
            description: "A file the demo model wrote.",
          },
        },
      ],
    };
  }
  // A file the instruction names, else the first one its context shows (a workspace's best match).
  const path = PATH.exec(scanned)?.[0] ?? PATH.exec(rest.join("\n").slice(0, SCANNED_CHARS))?.[0];
  if (path && tools.has("read_file")) {
    return { text: "", toolCalls: [{ name: "read_file", input: { path, startLine: null, endLine: null } }] };
  }
  return {
    text:
      `You said: "${instruction}". This is the Aptix demo model, not a real one: name a file ("What does ` +
      `src/app.ts export?") and it asks your client to read it; ask it to write one ("Write notes.md") and it ` +
      "asks you first; anything else it repeats.",
    toolCalls: [],
  };
}

/** The answer to one tool's output, naming the call it answers. */
function aboutOutput(output: FunctionCallOutputItem, items: readonly TranscriptItem[]): string {
  const call = items.find((item) => item.type === "function_call" && item.callId === output.callId);
  const input = call?.type === "function_call" ? parsed(call.argumentsJson) : undefined;
  const name = call?.type === "function_call" ? call.name : "the tool";
  if (output.isError) return `${name} failed: ${output.output}`;
  if (name === "read_file") {
    const path = String((input as { path?: unknown } | undefined)?.path ?? "the file");
    const value = parsed(output.output);
    const content = typeof value === "string" ? value : output.output;
    const exported = [...content.matchAll(EXPORTED)].map((match) => `\`${match[1]}\``);
    const lines = content.split("\n").length;
    return exported.length > 0
      ? `\`${path}\` exports ${exported.join(", ")} (${lines} line${lines === 1 ? "" : "s"}).`
      : `\`${path}\` has ${lines} line${lines === 1 ? "" : "s"}; it begins: ${JSON.stringify(content.slice(0, QUOTED_CHARS))}`;
  }
  if (name === "create_file") {
    const file = parsed(output.output) as { name?: unknown; url?: unknown } | undefined;
    if (typeof file?.url === "string")
      return `I wrote \`${String(file.name)}\`: download it from ${file.url}`;
    return output.output;
  }
  return `${name} answered: ${output.output.slice(0, QUOTED_CHARS)}`;
}

/** A summary as compaction asks for one: what the user asked, and the files named, from the rendered conversation. */
function summaryOf(items: readonly TranscriptItem[]): string {
  const conversation = items.map(textOfItem).find((text) => text.startsWith("[CONVERSATION]")) ?? "";
  const asked = [...conversation.matchAll(/\[INSTRUCTION\]\n([^\n]*)/g)].map((match) => `- ${match[1]}`);
  const files = [
    ...new Set([...conversation.matchAll(/"(?:path|name)":"([^"]+)"/g)].map((match) => match[1])),
  ];
  return [
    "1. Goals and constraints: the user is trying out the Aptix demo. They asked:",
    ...(asked.length > 0 ? asked : ["- nothing yet"]),
    `3. Files touched: ${files.length > 0 ? files.join(", ") : "none"}`,
    "5. Open tasks: none.",
  ].join("\n");
}

function partsOf(item: Extract<TranscriptItem, { type: "user_message" }>): string[] {
  return item.content.flatMap((part) => (part.type === "text" ? [part.text] : []));
}

function textOfItem(item: TranscriptItem): string {
  return item.type === "user_message" ? partsOf(item).join("\n") : "";
}

function parsed(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}

/** About four characters a token, as providers count English and code. */
function tokens(text: string): number {
  return Math.ceil(text.length / 4);
}
