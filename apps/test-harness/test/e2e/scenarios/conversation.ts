import { step } from "@aptix/testing-llm-servers";
import { expect, it } from "vitest";
import {
  BOOT_PROMPT,
  expectContinuation,
  expectFailure,
  expectFinal,
  expectOk,
  GENERAL_INSTRUCTIONS,
  REVIEW_INSTRUCTIONS,
  REVIEW_WELCOME,
  TEST_MODEL,
  toolContinuation,
  uniqueId,
  userTurn,
} from "../../../src/e2e/index.js";
import { responseIdOf, type ScenarioContext, sentBodies } from "./context.js";

type Body = Record<string, unknown>;
type InputItem = { role?: string; type?: string; content?: unknown; call_id?: string; output?: string };

const SYSTEM_TEXT = `${BOOT_PROMPT}\n\n${GENERAL_INSTRUCTIONS}`;
const systemMessage = { role: "system", content: [{ type: "input_text", text: SYSTEM_TEXT }] };
/** A user turn's message; `modeInstructions` when the turn tells the model its mode's instructions. */
const userMessage = (mode: string, instruction: string, modeInstructions?: string) => ({
  role: "user",
  content: [
    {
      type: "input_text",
      text: `[MODE: ${mode}]\n\n${modeInstructions ? `[MODE INSTRUCTIONS]\n${modeInstructions}\n\n` : ""}[INSTRUCTION]\n${instruction}`,
    },
  ],
});
const toolNames = (body: Body | undefined) =>
  ((body?.tools ?? []) as Array<{ name: string }>).map((tool) => tool.name);
const input = (body: Body | undefined) => body?.input as InputItem[];

/** Scenarios 1–4, 8 and 10: conversations, client and server tools, mode changes, idempotency, replay. */
export function conversationScenarios(ctx: ScenarioContext): void {
  const sent = () => sentBodies(ctx.harness);
  const responseId = (index: number) => responseIdOf(ctx.harness, index);

  it("runs a three-turn conversation: later calls continue with previous_response_id, no system message, tools every time", async () => {
    const sessionId = uniqueId("conversation");
    ctx.harness.script(step.text("Hello, I am Aptix."), step.text("a.ts exports run()."), step.text("Done."));

    const answers = [];
    for (const [turnId, instruction] of [
      ["t1", "Who are you?"],
      ["t2", "What does a.ts export?"],
      ["t3", "Thanks."],
    ] as const) {
      answers.push(expectFinal(await ctx.service.post(userTurn(sessionId, turnId, instruction))));
    }

    expect(
      answers.map((answer) => [answer.turnId, answer.primaryOutputText, answer.modeDisplayName]),
    ).toEqual([
      ["t1", "Hello, I am Aptix.", "General"],
      ["t2", "a.ts exports run().", "General"],
      ["t3", "Done.", "General"],
    ]);
    for (const answer of answers) {
      expect(answer.sessionId).toBe(sessionId);
      expect(answer.usage?.inputTokens).toBeGreaterThan(0);
      expect(answer.usage?.outputTokens).toBeGreaterThan(0);
      // Provider ids never leave the server.
      expect(JSON.stringify(answer)).not.toMatch(/resp_/);
    }

    const [first, second, third] = sent();
    expect(sent()).toHaveLength(3);
    expect(first).toEqual({
      model: TEST_MODEL,
      input: [systemMessage, userMessage("general", "Who are you?")],
      tools: [
        expect.objectContaining({ type: "function", name: "read_file", strict: true }),
        expect.objectContaining({ type: "function", name: "agent_change_mode", strict: true }),
      ],
      tool_choice: "auto",
      store: true,
      // The session's prompt cache: one key for all its calls (below), the same on every turn.
      prompt_cache_key: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect(second).toMatchObject({
      prompt_cache_key: (first as { prompt_cache_key: string }).prompt_cache_key,
      previous_response_id: responseId(0),
      input: [userMessage("general", "What does a.ts export?")],
      tool_choice: "auto",
      store: true,
    });
    expect(third).toMatchObject({
      previous_response_id: responseId(1),
      input: [userMessage("general", "Thanks.")],
    });
    for (const body of [second, third]) {
      expect(input(body).some((item) => item.role === "system")).toBe(false);
    }
    for (const body of [first, second, third])
      expect(toolNames(body)).toEqual(["read_file", "agent_change_mode"]);

    const summary = expectOk(await ctx.service.session(sessionId));
    expect(summary).toMatchObject({
      sessionId,
      conversationContextId: "default",
      mode: "general",
      modeHistory: [],
    });
    expect(summary.turns.map((turn) => [turn.turnId, turn.sequence, turn.status])).toEqual([
      ["t1", 1, "completed"],
      ["t2", 2, "completed"],
      ["t3", 3, "completed"],
    ]);

    const trace = expectOk(await ctx.service.trace(sessionId, "t2"));
    expect(trace.status).toBe("completed");
    expect(trace.llmCalls).toHaveLength(1);
    expect(trace.llmCalls[0]?.request?.continuation).toEqual({
      type: "previous_response",
      responseId: responseId(0),
    });
  });

  it("hands a client tool (read_file) to the client and sends its result back to the provider", async () => {
    const sessionId = uniqueId("client-tool");
    ctx.harness.script(
      step.functionCalls(
        { name: "read_file", arguments: { path: "src/a.ts" }, callId: "call_read_a" },
        { text: "Let me look." },
      ),
      step.text("a.ts exports run()."),
    );

    const continuation = expectContinuation(
      await ctx.service.post(userTurn(sessionId, "t1", "What is in src/a.ts?")),
    );
    expect(continuation).toEqual({
      kind: "client_tool_continuation",
      sessionId,
      turnId: "t1",
      modeDisplayName: "General",
      toolCalls: [{ toolCallId: "call_read_a", name: "read_file", argumentsJson: '{"path":"src/a.ts"}' }],
      toolContinuationMessage: "Let me look.",
    });
    const waiting = expectOk(await ctx.service.session(sessionId));
    expect(waiting.turns.map((turn) => turn.status)).toEqual(["awaiting_client_tools"]);

    const resultJson = JSON.stringify({ contents: "export function run() {}" });
    const body = toolContinuation(sessionId, "t1", [{ toolCallId: "call_read_a", resultJson }]);
    const final = expectFinal(await ctx.service.post(body));
    expect(final).toMatchObject({
      kind: "final",
      sessionId,
      turnId: "t1",
      primaryOutputText: "a.ts exports run().",
    });

    expect(sent()).toHaveLength(2);
    expect(sent()[1]).toMatchObject({
      previous_response_id: responseId(0),
      input: [{ type: "function_call_output", call_id: "call_read_a", output: resultJson }],
    });
    expect(input(sent()[1])).toHaveLength(1);
    expect(toolNames(sent()[1])).toEqual(["read_file", "agent_change_mode"]);

    // The same continuation again returns the stored answer and calls no LLM.
    const again = await ctx.service.post(body);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ successful: true, result: final, errors: [], warnings: [] });
    expect(sent()).toHaveLength(2);

    const done = expectOk(await ctx.service.session(sessionId));
    expect(done.turns.map((turn) => [turn.turnId, turn.status])).toEqual([["t1", "completed"]]);
  });

  it("runs a server call (agent_change_mode) and hands only the client call (read_file) out, then sends both outputs in call order", async () => {
    const sessionId = uniqueId("mixed");
    const reason = "The user asks for a review of b.ts.";
    ctx.harness.script(
      step.functionCalls([
        {
          name: "agent_change_mode",
          arguments: { mode: "review", reason, branch: false },
          callId: "call_mode",
        },
        { name: "read_file", arguments: { path: "src/b.ts" }, callId: "call_read_b" },
      ]),
      step.text("b.ts looks fine."),
      step.text("Ready for the next file."),
    );

    const continuation = expectContinuation(
      await ctx.service.post(userTurn(sessionId, "t1", "Review src/b.ts")),
    );
    expect(continuation.toolCalls).toEqual([
      { toolCallId: "call_read_b", name: "read_file", argumentsJson: '{"path":"src/b.ts"}' },
    ]);
    // The mode changed at once (docs/architecture.md, Turn lifecycle).
    expect(continuation.modeDisplayName).toBe("Code Review");

    const readResult = JSON.stringify({ contents: "export const b = 2;" });
    const final = expectFinal(
      await ctx.service.post(
        toolContinuation(sessionId, "t1", [{ toolCallId: "call_read_b", resultJson: readResult }]),
      ),
    );
    expect(final.modeDisplayName).toBe("Code Review");
    expect(final.primaryOutputText.startsWith(REVIEW_WELCOME)).toBe(true);
    expect(final.primaryOutputText).toBe(`${REVIEW_WELCOME}\n\nb.ts looks fine.`);
    expect(final.toolResults).toEqual([
      {
        toolCallId: "call_mode",
        name: "agent_change_mode",
        executionMs: expect.any(Number),
        resultJson: expect.any(String),
      },
    ]);

    // Both outputs reached the provider together, in the order the model called.
    const outputs = input(sent()[1]);
    expect(sent()[1]?.previous_response_id).toBe(responseId(0));
    expect(outputs.map((item) => [item.type, item.call_id])).toEqual([
      ["function_call_output", "call_mode"],
      ["function_call_output", "call_read_b"],
    ]);
    expect(JSON.parse(outputs[0]?.output ?? "null")).toMatchObject({
      mode: "review",
      displayName: "Code Review",
      instructions: REVIEW_INSTRUCTIONS,
      reason,
    });
    expect(outputs[1]?.output).toBe(readResult);
    // The turn's tools stay those of the mode it started in.
    expect(toolNames(sent()[1])).toEqual(["read_file", "agent_change_mode"]);

    const summary = expectOk(await ctx.service.session(sessionId));
    expect(summary).toMatchObject({ mode: "review", modeDisplayName: "Code Review" });
    expect(summary.modeHistory).toEqual([
      {
        turnId: "t1",
        previousMode: "general",
        newMode: "review",
        reason,
        changedBy: "alice",
        changedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    ]);

    // The next turn runs in the new mode, with its tools, and no welcome message again. As the first user
    // turn in that mode, it opens with the mode's instructions.
    const next = expectFinal(await ctx.service.post(userTurn(sessionId, "t2", "Next file?")));
    expect(next).toMatchObject({
      modeDisplayName: "Code Review",
      primaryOutputText: "Ready for the next file.",
    });
    expect(input(sent()[2])).toEqual([userMessage("review", "Next file?", REVIEW_INSTRUCTIONS)]);
    expect(toolNames(sent()[2])).toEqual(["read_file", "submit_review", "agent_change_mode"]);
  });

  it("refuses a call to a tool the mode did not offer (repo.read) back to the model, and answers 200 without it in toolResults", async () => {
    const sessionId = uniqueId("bad-tool-name");
    ctx.harness.script(
      step.functionCalls({ name: "repo.read", arguments: { path: "src/a.ts" }, callId: "call_dotted" }),
      step.text("I cannot read files that way."),
    );

    const answer = await ctx.service.post(userTurn(sessionId, "t1", "Read src/a.ts"));
    const final = expectFinal(answer);
    expect(final.primaryOutputText).toBe("I cannot read files that way.");
    // The server ran nothing: the refusal is not a server tool result (AGN-033 §5.3).
    expect(final.toolResults).toBeUndefined();
    expect(input(sent()[1])).toEqual([
      {
        type: "function_call_output",
        call_id: "call_dotted",
        output: JSON.stringify({ error: 'Tool "repo.read" is not available in mode "general".' }),
      },
    ]);
    const summary = expectOk(await ctx.service.session(sessionId));
    expect(summary.turns.map((turn) => turn.status)).toEqual(["completed"]);
  });

  it("fails the turn on mismatched tool results (409 TOOL_RESULTS_MISMATCH), and the session goes on", async () => {
    const sessionId = uniqueId("mismatch");
    ctx.harness.script(
      step.functionCalls({ name: "read_file", arguments: { path: "src/c.ts" }, callId: "call_read_c" }),
      step.text("Starting over."),
    );
    expectContinuation(await ctx.service.post(userTurn(sessionId, "t1", "Open src/c.ts")));

    const mismatch = await ctx.service.post(
      toolContinuation(sessionId, "t1", [{ toolCallId: "call_wrong", resultJson: '"x"' }]),
    );
    const error = expectFailure(mismatch, 409, "TOOL_RESULTS_MISMATCH");
    expect(error.details).toMatchObject({
      expectedToolCallIds: ["call_read_c"],
      receivedToolCallIds: ["call_wrong"],
    });

    const failed = expectOk(await ctx.service.session(sessionId));
    expect(failed.turns.map((turn) => [turn.turnId, turn.status, turn.error?.code])).toEqual([
      ["t1", "failed", "TOOL_RESULTS_MISMATCH"],
    ]);
    // The turn is over: even the right results are refused now.
    expectFailure(
      await ctx.service.post(
        toolContinuation(sessionId, "t1", [{ toolCallId: "call_read_c", resultJson: '"x"' }]),
      ),
      409,
      "TURN_NOT_AWAITING_TOOLS",
    );

    const next = expectFinal(await ctx.service.post(userTurn(sessionId, "t2", "Never mind.")));
    expect(next.primaryOutputText).toBe("Starting over.");
    // The failed turn was rolled back: the provider never sees its unanswered call.
    expect(sent()).toHaveLength(2);
    expect(sent()[1]?.previous_response_id).toBeUndefined();
    expect(input(sent()[1])).toEqual([systemMessage, userMessage("general", "Never mind.")]);

    const summary = expectOk(await ctx.service.session(sessionId));
    expect(summary.turns.map((turn) => [turn.turnId, turn.sequence, turn.status])).toEqual([
      ["t1", 1, "failed"],
      ["t2", 2, "completed"],
    ]);
  });

  it("replays an identical user turn from the store (one LLM call) and refuses its turnId with another body", async () => {
    const sessionId = uniqueId("idempotent");
    ctx.harness.script(step.text("Answered once."));
    const body = userTurn(sessionId, "t1", "Say something once.");

    const first = await ctx.service.post(body);
    const second = await ctx.service.post(body);
    expect(expectFinal(first).primaryOutputText).toBe("Answered once.");
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(sent()).toHaveLength(1);

    const conflict = await ctx.service.post(userTurn(sessionId, "t1", "Say something else."));
    expect(expectFailure(conflict, 409, "TURN_ID_CONFLICT").details).toEqual({ turnId: "t1" });
    expect(sent()).toHaveLength(1);

    const summary = expectOk(await ctx.service.session(sessionId));
    expect(summary.turns.map((turn) => [turn.turnId, turn.status])).toEqual([["t1", "completed"]]);
  });

  it("recovers from previous_response_not_found by replaying the transcript", async () => {
    const sessionId = uniqueId("replay");
    ctx.harness.script(
      step.text("First answer."),
      step.text("Second answer, replayed."),
      step.text("Third answer."),
    );

    expectFinal(await ctx.service.post(userTurn(sessionId, "t1", "First question")));
    const forgotten = responseId(0);
    expect(ctx.harness.forget(forgotten)).toBe(true);

    const second = expectFinal(await ctx.service.post(userTurn(sessionId, "t2", "Second question")));
    expect(second.primaryOutputText).toBe("Second answer, replayed.");

    const [, lost, replayed] = ctx.harness.responseRequests();
    expect(lost?.body).toMatchObject({ previous_response_id: forgotten });
    expect(lost?.answer).toMatchObject({
      status: 400,
      body: { error: { code: "previous_response_not_found", param: "previous_response_id" } },
    });
    expect(lost?.consumedStep).toBe(false);
    const replayBody = replayed?.body as Body;
    expect(replayBody.previous_response_id).toBeUndefined();
    expect(input(replayBody)).toEqual([
      systemMessage,
      userMessage("general", "First question"),
      expect.objectContaining({ role: "assistant", content: "First answer." }),
      userMessage("general", "Second question"),
    ]);
    expect(toolNames(replayBody)).toEqual(["read_file", "agent_change_mode"]);

    const trace = expectOk(await ctx.service.trace(sessionId, "t2"));
    expect(trace.llmCalls.map((call) => [call.error?.code ?? null, call.request?.continuation.type])).toEqual(
      [
        ["PROVIDER_ERROR", "previous_response"],
        [null, "replay"],
      ],
    );

    // The chain goes on from the replayed response.
    expectFinal(await ctx.service.post(userTurn(sessionId, "t3", "Third question")));
    expect(sent()[3]).toMatchObject({
      previous_response_id: responseId(2),
      input: [userMessage("general", "Third question")],
    });
    const summary = expectOk(await ctx.service.session(sessionId));
    expect(summary.turns.map((turn) => turn.status)).toEqual(["completed", "completed", "completed"]);
  });
}
