import { fail } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import { CompositionStep } from "../../src/composition/composition-step.js";
import { orderOutputs } from "../../src/composition/round-opening.js";
import { InMemoryFileStore } from "../../src/in-memory/in-memory-file-store.js";
import { inMemorySessionStores } from "../../src/in-memory/in-memory-session-stores.js";
import {
  AgentCatalog,
  CONTINUATION_LOST,
  type ServerTool,
  sha256ContentHashService,
  type TranscriptItem,
} from "../../src/index.js";
import { LlmCallStep } from "../../src/llm-call/llm-call-step.js";
import { TurnPersistence } from "../../src/persistence/turn-persistence.js";
import { Compactor } from "../../src/reasoner/compactor.js";
import type { ReasonerInput } from "../../src/reasoner/reasoner-step.js";
import { ReasonerStep } from "../../src/reasoner/reasoner-step.js";
import { NO_USAGE, type TurnProgress } from "../../src/records/turn-progress.js";
import { FileKeeper } from "../../src/server-tools/file-keeper.js";
import { ServerToolExecutionStep } from "../../src/server-tools/server-tool-execution-step.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { ScriptedLlmProvider } from "../../src/testing/scripted-llm-provider.js";
import { lookupTool, TEST_CATALOG } from "../support/test-agent.js";

const key = { principal: "alice", sessionId: "s1" };

async function setup(maxLlmCalls = 5) {
  const clock = new ManualClock();
  const created = AgentCatalog.create(TEST_CATALOG, [lookupTool as ServerTool]);
  if (!created.successful) throw new Error(created.errors[0].message);
  const catalog = created.result;
  const store = inMemorySessionStores(clock);
  let ids = 0;
  const idGen = { newId: (prefix: string) => `${prefix}_${++ids}` };
  const persistence = new TurnPersistence({ stores: store, clock, ids: idGen, leaseMs: 60_000 });
  const provider = new ScriptedLlmProvider();
  const llmCall = new LlmCallStep();
  const reasoner = new ReasonerStep({
    composition: new CompositionStep(catalog, new TextEncoder().encode("deployment secret")),
    llmCall,
    compactor: new Compactor(llmCall, clock),
    serverTools: new ServerToolExecutionStep({
      registry: catalog.serverTools,
      clock,
      files: new FileKeeper({
        store: new InMemoryFileStore(clock),
        hashing: sha256ContentHashService,
        ids: idGen,
        clock,
      }),
    }),
    clock,
    modes: catalog.modes,
    maxLlmCalls,
  });
  const create = { conversationContextId: "default", agentContextId: null, mode: "general" };
  const claimed = await persistence.apply({ guard: "create", key, now: clock.now(), create }, false);
  if (claimed.outcome !== "applied") throw new Error(`not applied: ${claimed.outcome}`);
  const { session, lease } = claimed;
  const context = catalog.conversationContext("default");
  if (!context) throw new Error("no context");
  const mode = catalog.modes.get("general");
  const progress: TurnProgress = {
    cursor: session.cursor,
    usage: NO_USAGE,
    llmCallCount: 0,
    toolExecutions: [],
    files: [],
    warnings: [],
  };
  const input = (instruction: string): ReasonerInput => ({
    lease,
    provider,
    context,
    mode,
    session,
    turnId: "t1",
    opening: { type: "user_turn", request: { sessionId: "s1", turnId: "t1", instruction } },
    progress,
  });
  return { clock, store, provider, reasoner, session, lease, progress, input };
}

/** The user message Composition makes of the instruction "Hello". */
const hello: TranscriptItem = {
  type: "user_message",
  content: [{ type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nHello" }],
};
const system: TranscriptItem = { type: "system_message", text: "You are Aptix.\n\nHelp with anything." };

describe("ReasonerStep (layer 4)", () => {
  it("answers final on a text answer and advances the cursor and the stored transcript", async () => {
    const { reasoner, provider, progress, store, lease, input } = await setup();
    provider.enqueue({ text: "Hi there.", usage: { inputTokens: 4, outputTokens: 2 } });
    const outcome = await reasoner.run(input("Hello"));
    expect(outcome).toEqual({
      successful: true,
      result: { kind: "final", sessionMode: "general", text: "Hi there.", finishReason: "stop" },
      errors: [],
      warnings: [],
    });
    // The model has now been told the turn's mode; the chain's size is what the provider reported.
    expect(progress.cursor).toEqual({
      responseId: "resp_1",
      pendingInput: [],
      transcriptLength: 3,
      mode: "general",
      chainTokens: { input: 4, output: 2 },
    });
    expect(progress.usage).toEqual({ inputTokens: 4, outputTokens: 2, totalTokens: 6, llmCalls: 1 });
    expect(progress.llmCallCount).toBe(1);
    // A call that asked for no tools is written with the lease's next write or read (a turn's settlement).
    expect(await lease.loadTranscript(10)).toEqual([
      system,
      hello,
      { type: "assistant_message", text: "Hi there." },
    ]);
    expect((await store.directory.getSession(key))?.cursor).toEqual(progress.cursor);
  });

  it("loops through server tools and stops at client calls with what an abandon needs to roll back", async () => {
    const { reasoner, provider, progress, input } = await setup();
    provider.enqueue(
      { toolCalls: [{ name: "lookup", arguments: { query: "a" }, callId: "s1" }] },
      {
        text: "Need files.",
        toolCalls: [
          { name: "read_file", arguments: { path: "x" }, callId: "c1" },
          { name: "lookup", arguments: { query: "b" }, callId: "s2" },
          { name: "read_file", arguments: { path: "y" }, callId: "c2" },
        ],
      },
    );
    const outcome = await reasoner.run(input("Hello"));
    if (!outcome.successful) throw new Error(outcome.errors[0].message);
    const s1Output: TranscriptItem = {
      type: "function_call_output",
      callId: "s1",
      output: '{"found":"answer to a"}',
      isError: false,
    };
    expect(outcome.result).toEqual({
      kind: "client_tools",
      sessionMode: "general",
      text: "Need files.",
      clientCalls: [
        { callId: "c1", name: "read_file", argumentsJson: '{"path":"x"}' },
        { callId: "c2", name: "read_file", argumentsJson: '{"path":"y"}' },
      ],
      pending: {
        calls: [
          { callId: "c1", name: "read_file", argumentsJson: '{"path":"x"}' },
          { callId: "s2", name: "lookup", argumentsJson: '{"query":"b"}' },
          { callId: "c2", name: "read_file", argumentsJson: '{"path":"y"}' },
        ],
        clientCallIds: ["c1", "c2"],
        serverOutputs: [
          { type: "function_call_output", callId: "s2", output: '{"found":"answer to b"}', isError: false },
        ],
        resumeCursor: {
          responseId: "resp_1",
          pendingInput: [s1Output],
          transcriptLength: 3,
          chainTokens: { input: 10, output: 5 },
          mode: "general",
        },
      },
    });
    expect(provider.requests[1]?.input).toEqual([s1Output]);
    expect(progress.toolExecutions.map((execution) => execution.toolCallId)).toEqual(["s1", "s2"]);
    expect(progress.files).toHaveLength(2);
    expect(progress.cursor).toEqual({
      responseId: "resp_2",
      pendingInput: [],
      transcriptLength: 8,
      mode: "general",
      chainTokens: { input: 10, output: 5 },
    });
  });

  it("counts every call against the limit, failed ones included", async () => {
    const { reasoner, provider, progress, input } = await setup(2);
    provider.enqueue(
      { toolCalls: [{ name: "lookup", arguments: { query: "a" } }] },
      { toolCalls: [{ name: "lookup", arguments: { query: "b" } }] },
      { text: "never reached" },
    );
    const outcome = await reasoner.run(input("Hello"));
    expect(!outcome.successful && outcome.errors[0]).toEqual({
      code: "ITERATION_LIMIT_EXCEEDED",
      message:
        "The request made 2 LLM calls (summaries included) without a final answer or a client tool call.",
      details: { maxLlmCalls: 2 },
    });
    expect(progress.llmCallCount).toBe(2);
    expect(provider.remainingSteps).toBe(1);
  });

  it("replays a lost continuation once, and returns the failure when the replay is lost too", async () => {
    const { reasoner, provider, store, lease, input } = await setup();
    provider.enqueue({ text: "First." });
    expect((await reasoner.run(input("Hello"))).successful).toBe(true);
    provider.forget("resp_1");
    const lostAgain = fail("PROVIDER_ERROR", "lost again", { status: 400, reason: CONTINUATION_LOST });
    provider.enqueue({ failure: lostAgain });
    const outcome = await reasoner.run(input("Hello"));
    expect(outcome).toEqual(lostAgain);
    expect(provider.requests.map((request) => request.continuation.type)).toEqual([
      "none",
      "previous_response",
      "replay",
    ]);
    await lease.loadTranscript(0); // Writes the last call, kept back for the round's settlement.
    expect(
      (await store.transcripts.listLlmCalls(key, "t1")).map((call) => call.error?.message ?? null),
    ).toEqual([null, "Previous response with id 'resp_1' not found.", "lost again"]);
  });

  it("does not retry a lost continuation when there is nothing to replay", async () => {
    const { reasoner, provider, input } = await setup();
    const lost = fail("PROVIDER_ERROR", "lost", { status: 400, reason: CONTINUATION_LOST });
    provider.enqueue({ failure: lost }, { text: "unused" });
    expect(await reasoner.run(input("Hello"))).toEqual(lost);
    expect(provider.requests).toHaveLength(1);
  });

  it("stores a mode change and answers it, leaving the session it was given and the turn's mode and tools", async () => {
    const { reasoner, provider, session, store, input } = await setup();
    provider.enqueue(
      {
        toolCalls: [{ name: "agent_change_mode", arguments: { mode: "review", reason: "r", branch: false } }],
      },
      { text: "ok" },
    );
    const running = input("Hello");
    const outcome = await reasoner.run(running);
    expect(outcome.successful && outcome.result.sessionMode).toBe("review");
    expect((await store.directory.getSession(key))?.mode).toBe("review");
    // What the round changed comes back as a value; the record it read stays as read.
    expect(session.mode).toBe("general");
    expect(running.mode.id).toBe("general");
    expect(provider.requests.map((request) => request.tools.map((tool) => tool.name))).toEqual([
      ["read_file", "lookup", "agent_change_mode"],
      ["read_file", "lookup", "agent_change_mode"],
    ]);
  });
});

describe("orderOutputs", () => {
  it("puts outputs in the order of the calls and drops calls without output", () => {
    const out = (callId: string): TranscriptItem & { type: "function_call_output" } => ({
      type: "function_call_output",
      callId,
      output: callId,
      isError: false,
    });
    const calls = ["a", "b", "c"].map((callId) => ({ callId, name: "x", argumentsJson: "{}" }));
    expect(orderOutputs(calls, [out("c"), out("a")])).toEqual([out("a"), out("c")]);
  });
});
