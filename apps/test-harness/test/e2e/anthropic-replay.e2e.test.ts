/**
 * Replay on a long session: Anthropic keeps no conversation state, so every call replays the session's whole
 * transcript from the store. A 100-turn session (two of its turns with a tool_use / tool_result round, one of
 * them an error) is run through the service's HTTP app, in process, on each store; this file checks
 *
 * - that every request the provider got, the 100th included, is byte for byte the body built here from the
 *   scripted turns alone: the raw body the harness recorded equals `JSON.stringify` of the expected object,
 *   whose keys are written in the order the adapter writes them (`model`, `max_tokens`, `messages`, `system`,
 *   `tools`, `tool_choice`; blocks as `type` first), since the SDK sends `JSON.stringify` of the body as is;
 * - that the store reads a constant number of SQL statements per LLM call: the statements of turn 100 are
 *   those of turn 2, one for one.
 *
 * The service is wired in process (AgentService + `openStore(url, { onQuery })` + the real
 * AnthropicMessagesProvider pointed at the scripted server, served by `createApp`): `startServer` opens its
 * store itself and cannot count its statements.
 */
import { createAgentExecuteRequestValidator } from "@aptix/contracts";
import { AgentService } from "@aptix/core";
import { AnthropicMessagesProvider } from "@aptix/llm-anthropic";
import { createApp, loadCatalog, silentLogger } from "@aptix/server";
import { type AptixStore, openStore } from "@aptix/store-drizzle";
import { anthropicStep, type ScriptedAnthropic, startScriptedAnthropic } from "@aptix/testing-llm-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ANTHROPIC_TEST_MODEL,
  BOOT_PROMPT,
  databaseFor,
  E2E_CATALOG,
  E2E_STORES,
  GENERAL_INSTRUCTIONS,
  PROVIDER_CONTEXTS,
  PROVIDERS_CATALOG,
  type TestDatabase,
  type TestStoreKind,
  uniqueId,
  writeCatalog,
} from "../../src/e2e/index.js";

const TURNS = 100;

/** The turns with a client tool round: the model reads a file first, the client answers (once with an error). */
const TOOL_TURNS = new Map<number, { id: string; path: string; resultJson?: string; errorMessage?: string }>([
  [31, { id: "toolu_replay_31", path: "src/a.ts", resultJson: JSON.stringify("export const a = 1;\n") }],
  [77, { id: "toolu_replay_77", path: "src/gone.ts", errorMessage: "ENOENT: src/gone.ts does not exist" }],
]);
const TOOL_INTRO = "Let me read it first.";

/** Every tenth instruction has characters JSON escapes (quote, backslash, tab, newline) and non-ASCII text. */
const instruction = (k: number) =>
  k % 10 === 0 ? `Question ${k}: "quoted" \\ path\ttab\nnew line — naïve ✓` : `Question ${k}: what is ${k}²?`;
const answer = (k: number) => `${k} squared is ${k * k}.`;

// The request body as the adapter writes it (docs/wire-mapping.md), built from the catalog and the script alone.
const SYSTEM = `${BOOT_PROMPT}\n\n${GENERAL_INSTRUCTIONS}`;
const readFile = E2E_CATALOG.clientTools[0];
/** The adapter's prompt-cache breakpoint, on the system block, the last tool and the last message's last block. */
const CACHED = { type: "ephemeral" };
const TOOLS = [
  { name: readFile?.name, description: readFile?.description, input_schema: readFile?.parameters },
  {
    name: "agent_change_mode",
    description:
      "Switch this session to another mode when the user's work moves to a different phase. The new mode's tools become available from the next user turn.",
    input_schema: {
      type: "object",
      properties: {
        mode: {
          type: "string",
          enum: ["general", "review"],
          description: "The id of the mode to switch to.",
        },
        reason: { type: "string", description: "Why the switch helps the user, in one sentence." },
        branch: { type: "boolean", description: "Whether the work should continue in a new session." },
      },
      required: ["mode", "reason", "branch"],
      additionalProperties: false,
    },
    cache_control: CACHED,
  },
];

type Block =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | { type: "tool_result"; tool_use_id: string; content: string; is_error: boolean };
type Message = { role: "user" | "assistant"; content: Block[] };

type Marked<T> = T & { cache_control?: typeof CACHED };

/** The messages with the breakpoint on the last block of the last one. */
const withBreakpoint = (messages: Message[]): Array<{ role: Message["role"]; content: Marked<Block>[] }> => {
  const last = messages.at(-1);
  if (!last) return messages;
  const blocks: Marked<Block>[] = [...last.content];
  const block = blocks.at(-1);
  if (block) blocks[blocks.length - 1] = { ...block, cache_control: CACHED };
  return [...messages.slice(0, -1), { ...last, content: blocks }];
};

const expectedBody = (messages: Message[]) => ({
  model: ANTHROPIC_TEST_MODEL,
  max_tokens: 4096,
  messages: withBreakpoint(messages),
  system: [{ type: "text", text: SYSTEM, cache_control: CACHED }],
  tools: TOOLS,
  tool_choice: { type: "auto" },
});

interface Service {
  harness: ScriptedAnthropic;
  store: AptixStore;
  database: TestDatabase;
  post(body: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
  /** Statements since the last call of `post`. */
  statements: string[];
}

describe.each(E2E_STORES)("a %s store", (kind: TestStoreKind) => {
  let service: Service | undefined;

  beforeAll(async () => {
    const harness = await startScriptedAnthropic();
    const database = await databaseFor(kind);
    const statements: string[] = [];
    const store = await openStore(database.url, {
      ...(database.schema ? { schema: database.schema } : {}),
      onQuery: (sql) => statements.push(sql),
    });
    const { catalog } = await loadCatalog(await writeCatalog(PROVIDERS_CATALOG));
    const agent = new AgentService({
      catalog,
      providers: [new AnthropicMessagesProvider({ apiKey: "test", baseURL: harness.baseUrl, maxRetries: 0 })],
      store: store.sessions,
      files: store.files,
      events: store.events,
    });
    const app = createApp({
      service: agent,
      validate: createAgentExecuteRequestValidator(),
      apiKeys: new Map(),
      maxBodyBytes: 10 * 1024 * 1024,
      readiness: () => store.readiness(),
      logger: silentLogger,
    });
    service = {
      harness,
      store,
      database,
      statements,
      async post(body) {
        statements.length = 0;
        const response = await app.request("/v1/agent/execute", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        return { status: response.status, body: (await response.json()) as Record<string, unknown> };
      },
    };
  });

  afterAll(async () => {
    await service?.store.close();
    await service?.database.dispose();
    await service?.harness.close();
  });

  it(`replays a ${TURNS}-turn session byte for byte on every call, with the same SQL statements per call at turn 2 and turn ${TURNS}`, async () => {
    if (!service) throw new Error("the service did not start");
    const { harness, post, statements } = service;
    const sessionId = uniqueId("replay-100");
    /** Per request: its label, the statements it ran, and how many provider calls it made. */
    const perRequest: Array<{ label: string; statements: string[]; calls: number }> = [];
    const send = async (label: string, body: Record<string, unknown>) => {
      const callsBefore = harness.messageRequests().length;
      const answered = await post(body);
      perRequest.push({
        label,
        statements: [...statements],
        calls: harness.messageRequests().length - callsBefore,
      });
      return answered;
    };

    const messages: Message[] = [];
    /** The expected raw body of each provider call, in order. */
    const expectedRaw: string[] = [];
    for (let k = 1; k <= TURNS; k++) {
      const tool = TOOL_TURNS.get(k);
      messages.push({
        role: "user",
        content: [{ type: "text", text: `[MODE: general]\n\n[INSTRUCTION]\n${instruction(k)}` }],
      });
      expectedRaw.push(JSON.stringify(expectedBody(messages)));
      if (tool) {
        harness.enqueue(
          anthropicStep.toolUse(
            { id: tool.id, name: "read_file", input: { path: tool.path } },
            { text: TOOL_INTRO },
          ),
          anthropicStep.text(answer(k)),
        );
        const asked = await send(`turn ${k}: tool call`, {
          sessionId,
          turnId: `t${k}`,
          instruction: instruction(k),
          conversationContextId: PROVIDER_CONTEXTS.anthropic,
        });
        expect(asked.status).toBe(200);
        expect(asked.body.result).toMatchObject({
          kind: "client_tool_continuation",
          toolCalls: [
            { toolCallId: tool.id, name: "read_file", argumentsJson: JSON.stringify({ path: tool.path }) },
          ],
          toolContinuationMessage: TOOL_INTRO,
        });
        messages.push({
          role: "assistant",
          content: [
            { type: "text", text: TOOL_INTRO },
            { type: "tool_use", id: tool.id, name: "read_file", input: { path: tool.path } },
          ],
        });
        messages.push({
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: tool.id,
              content: tool.errorMessage ?? tool.resultJson ?? "",
              is_error: tool.errorMessage !== undefined,
            },
          ],
        });
        expectedRaw.push(JSON.stringify(expectedBody(messages)));
        const result =
          tool.errorMessage !== undefined
            ? { toolCallId: tool.id, executionMs: 5, errorMessage: tool.errorMessage }
            : { toolCallId: tool.id, executionMs: 5, resultJson: tool.resultJson };
        const done = await send(`turn ${k}: continuation`, {
          sessionId,
          turnId: `t${k}`,
          toolResults: [result],
        });
        expect(done.status).toBe(200);
        expect(done.body.result).toMatchObject({ kind: "final", primaryOutputText: answer(k) });
      } else {
        harness.enqueue(anthropicStep.text(answer(k)));
        const done = await send(`turn ${k}`, {
          sessionId,
          turnId: `t${k}`,
          instruction: instruction(k),
          conversationContextId: PROVIDER_CONTEXTS.anthropic,
        });
        expect(done.status, JSON.stringify(done.body)).toBe(200);
        expect(done.body.result).toMatchObject({
          kind: "final",
          turnId: `t${k}`,
          primaryOutputText: answer(k),
        });
      }
      messages.push({ role: "assistant", content: [{ type: "text", text: answer(k) }] });
    }

    // Every call sent exactly the session's items, in order, byte for byte; the 100th is the longest.
    const sent = harness.messageRequests();
    expect(sent.map((request) => request.validationError)).toEqual(sent.map(() => undefined));
    expect(sent).toHaveLength(TURNS + TOOL_TURNS.size);
    expect(harness.pendingSteps()).toBe(0);
    const last = sent.at(-1);
    expect((last?.body as { messages?: unknown[] } | undefined)?.messages).toHaveLength(
      2 * TURNS - 1 + 2 * TOOL_TURNS.size,
    );
    expect(last?.rawBody).toBe(expectedRaw.at(-1));
    sent.forEach((request, index) => {
      if (request.rawBody !== expectedRaw[index]) {
        expect.fail(
          `call #${index + 1} differs from the expected body:\n${request.rawBody}\n${expectedRaw[index]}`,
        );
      }
    });

    // One provider call per request, and a constant number of statements per call.
    expect(perRequest.map((request) => request.calls)).toEqual(perRequest.map(() => 1));
    const plain = perRequest.filter((request) => /^turn \d+$/.test(request.label));
    const turn2 = plain.find((request) => request.label === "turn 2");
    const turn100 = plain.find((request) => request.label === `turn ${TURNS}`);
    expect(turn2?.statements.length).toBeGreaterThan(0);
    expect(turn100?.statements.length).toBe(turn2?.statements.length);
    // Not just as many: the very same statements, in the same order.
    expect(turn100?.statements).toEqual(turn2?.statements);
    // Every plain turn after the first (which creates the session) runs the same number of statements.
    const counts = new Set(plain.slice(1).map((request) => request.statements.length));
    expect([...counts]).toEqual([turn2?.statements.length]);
    const toolCalls = perRequest.filter((request) => request.label.endsWith("tool call"));
    const continuations = perRequest.filter((request) => request.label.endsWith("continuation"));
    expect(new Set(toolCalls.map((request) => request.statements.length)).size).toBe(1);
    expect(new Set(continuations.map((request) => request.statements.length)).size).toBe(1);
  });
});
