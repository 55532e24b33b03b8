import { fail } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import type { FixedContextChunk } from "../../src/in-memory/in-memory-context-retriever.js";
import type { LlmRequest } from "../../src/index.js";
import { sessionInDroppedMode } from "../support/dropped-mode.js";
import {
  catalogWithModes,
  createTestAgent,
  errorsOf,
  PRINCIPAL,
  responseOf,
  resultOf,
} from "../support/test-agent.js";

const CHUNK: FixedContextChunk = {
  chunkId: "chunk_a",
  path: "src/a.ts",
  startLine: 1,
  endLine: 1,
  language: "typescript",
  text: "export const a = 1;",
};

const toReview = { mode: "review", reason: "The user asked for a review.", branch: false };
const toDesign = { mode: "design", reason: "Design first.", branch: false };
const withDesign = catalogWithModes({
  id: "design",
  displayName: "Design",
  instructions: "Design the solution.",
  welcomeMessage: "Let's design.",
  tools: ["read_file"],
  toolChoice: null,
});
const GENERAL_TOOLS = ["read_file", "lookup", "agent_change_mode"];
const REVIEW_TOOLS = ["read_file", "submit_review", "agent_change_mode"];

describe("mode changes through agent_change_mode (AGN-011 §5)", () => {
  it("persists the mode and its history at once, shows it on the same turn, and switches tools from the next turn", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { toolCalls: [{ name: "agent_change_mode", arguments: toReview, callId: "m1" }] },
      { toolCalls: [{ name: "lookup", arguments: { query: "guidelines" }, callId: "s1" }] },
      { text: "Send me the diff." },
      { text: "Looks good." },
    );
    const changedAt = agent.clock.now();
    const first = responseOf(
      await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Please review my change" }),
    );
    expect(first).toMatchObject({
      kind: "final",
      modeDisplayName: "Code Review",
      primaryOutputText: "Switched to code review.\n\nSend me the diff.",
    });
    expect(first.kind === "final" && first.primaryOutputText.startsWith("Switched to code review.")).toBe(
      true,
    );

    // The tool's output tells the model about the new mode; the rest of the turn keeps general's tools.
    expect(agent.provider.requests[1]?.input).toEqual([
      {
        type: "function_call_output",
        callId: "m1",
        output: JSON.stringify({
          mode: "review",
          displayName: "Code Review",
          instructions: "Review the code you are shown.",
          reason: "The user asked for a review.",
          branch: false,
        }),
        isError: false,
      },
    ]);
    expect(
      agent.provider.requests.slice(0, 3).map((request) => request.tools.map((tool) => tool.name)),
    ).toEqual([GENERAL_TOOLS, GENERAL_TOOLS, GENERAL_TOOLS]);
    expect(agent.provider.requests.slice(0, 3).map((request) => request.toolChoice)).toEqual([
      { type: "auto" },
      { type: "auto" },
      { type: "auto" },
    ]);

    const session = resultOf(await agent.service.getSession(PRINCIPAL, "s"));
    expect(session.mode).toBe("review");
    expect(session.modeDisplayName).toBe("Code Review");
    expect(session.modeHistory).toEqual([
      {
        turnId: "t1",
        previousMode: "general",
        newMode: "review",
        reason: "The user asked for a review.",
        changedBy: PRINCIPAL,
        changedAt,
      },
    ]);
    // The turn keeps the mode it started in as its snapshot.
    expect(session.turns[0]).toMatchObject({ turnId: "t1", mode: "general", status: "completed" });

    const second = responseOf(
      await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Here it is" }),
    );
    expect(second).toMatchObject({
      kind: "final",
      modeDisplayName: "Code Review",
      primaryOutputText: "Looks good.",
    });
    const next = agent.provider.requests[3];
    // The first user turn in the new mode tells the model its instructions (docs/wire-mapping.md).
    expect(next?.input).toEqual([
      {
        type: "user_message",
        content: [
          {
            type: "text",
            text: "[MODE: review]\n\n[MODE INSTRUCTIONS]\nReview the code you are shown.\n\n[INSTRUCTION]\nHere it is",
          },
        ],
      },
    ]);
    expect(next?.tools.map((tool) => tool.name)).toEqual(REVIEW_TOOLS);
    expect(next?.toolChoice).toEqual({ type: "tool", name: "submit_review" });
    expect(next?.continuation).toEqual({ type: "previous_response", responseId: "resp_3" });
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).turns[1]?.mode).toBe("review");
  });

  it("goes back to the mode a turn began in when rewound before it, with a history row, and offers that mode's tools next", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { text: "Hello." },
      { toolCalls: [{ name: "agent_change_mode", arguments: toReview, callId: "m1" }] },
      { text: "Send me the diff." },
      { text: "Something else, then." },
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Please review" }));
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).mode).toBe("review");

    const rewoundAt = agent.clock.now();
    const rewound = resultOf(await agent.service.rewindSession(PRINCIPAL, "s", "t2"));
    expect(rewound.mode).toBe("general");
    expect(rewound.modeHistory.map((entry) => [entry.previousMode, entry.newMode])).toEqual([
      ["general", "review"],
      ["review", "general"],
    ]);
    expect(rewound.modeHistory[1]).toEqual({
      turnId: "t2",
      previousMode: "review",
      newMode: "general",
      reason: "Rewound before turn t2, which began in mode general.",
      changedBy: PRINCIPAL,
      changedAt: rewoundAt,
    });
    // Sent again, nothing more is written.
    expect(resultOf(await agent.service.rewindSession(PRINCIPAL, "s", "t2"))).toStrictEqual(rewound);

    responseOf(await agent.execute({ sessionId: "s", turnId: "t3", instruction: "Never mind" }));
    expect(agent.provider.requests[3]?.tools.map((tool) => tool.name)).toEqual(GENERAL_TOOLS);
    // A rewind before a turn of the mode the session is in changes no mode and writes no row.
    const again = resultOf(await agent.service.rewindSession(PRINCIPAL, "s", "t3"));
    expect([again.mode, again.modeHistory.length]).toEqual(["general", 2]);
  });

  it("gives a fork the mode changes of the turns it copies, none after its point, and its source keeps its own", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { text: "Hello." },
      { toolCalls: [{ name: "agent_change_mode", arguments: toReview, callId: "m1" }] },
      { text: "Send me the diff." },
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Please review" }));
    const source = resultOf(await agent.service.getSession(PRINCIPAL, "s"));

    const whole = resultOf(await agent.service.forkSession(PRINCIPAL, "s", { newSessionId: "whole" }));
    expect([whole.mode, whole.modeHistory]).toStrictEqual([source.mode, source.modeHistory]);
    const before = resultOf(
      await agent.service.forkSession(PRINCIPAL, "s", { newSessionId: "before-t2", atTurnId: "t2" }),
    );
    expect([before.mode, before.modeHistory]).toStrictEqual(["general", []]);
    // Deleting the fork leaves the source's history whole.
    expect((await agent.service.deleteSession(PRINCIPAL, "whole")).successful).toBe(true);
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).modeHistory).toStrictEqual(
      source.modeHistory,
    );
  });

  it("shows the new mode on a client tool continuation and keeps the old tools for the turn's continuation round", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      {
        toolCalls: [
          { name: "agent_change_mode", arguments: toReview, callId: "m1" },
          { name: "read_file", arguments: { path: "a.ts" }, callId: "c1" },
        ],
      },
      { text: "Reviewed." },
    );
    const paused = responseOf(
      await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Review a.ts" }),
    );
    expect(paused).toMatchObject({ kind: "client_tool_continuation", modeDisplayName: "Code Review" });
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).mode).toBe("review");

    const final = responseOf(
      await agent.execute({
        sessionId: "s",
        turnId: "t1",
        toolResults: [{ toolCallId: "c1", executionMs: 1, resultJson: '"code"' }],
      }),
    );
    expect(final).toMatchObject({
      kind: "final",
      modeDisplayName: "Code Review",
      primaryOutputText: "Switched to code review.\n\nReviewed.",
    });
    expect(agent.provider.requests[1]?.tools.map((tool) => tool.name)).toEqual(GENERAL_TOOLS);
    expect(agent.provider.requests[1]?.toolChoice).toEqual({ type: "auto" });
    expect(
      agent.provider.requests[1]?.input.map((item) => item.type === "function_call_output" && item.callId),
    ).toEqual(["m1", "c1"]);
  });

  it("applies the last of several changes in one response and warns MULTIPLE_MODE_CHANGES", async () => {
    const config = catalogWithModes({
      id: "design",
      displayName: "Design",
      instructions: "Design the solution.",
      welcomeMessage: "Let's design.",
      tools: ["read_file"],
      toolChoice: null,
    });
    const agent = await createTestAgent({ config });
    agent.provider.enqueue(
      {
        toolCalls: [
          { name: "agent_change_mode", arguments: toReview, callId: "m1" },
          {
            name: "agent_change_mode",
            arguments: { mode: "design", reason: "Design first.", branch: false },
            callId: "m2",
          },
        ],
      },
      { text: "Designing." },
    );
    const result = await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Plan it" });
    expect(responseOf(result)).toMatchObject({
      kind: "final",
      modeDisplayName: "Design",
      primaryOutputText: "Let's design.\n\nDesigning.",
    });
    expect(result.warnings).toEqual([
      {
        code: "MULTIPLE_MODE_CHANGES",
        message: "The model changed mode 2 times in this turn; the last change (design) applies.",
      },
    ]);
    const session = resultOf(await agent.service.getSession(PRINCIPAL, "s"));
    expect(session.mode).toBe("design");
    expect(session.modeHistory.map((entry) => [entry.previousMode, entry.newMode, entry.reason])).toEqual([
      ["general", "design", "Design first."],
    ]);
  });

  it("warns MULTIPLE_MODE_CHANGES once, counting them all, for changes in successive responses of one round", async () => {
    const agent = await createTestAgent({ config: withDesign });
    agent.provider.enqueue(
      { toolCalls: [{ name: "agent_change_mode", arguments: toReview, callId: "m1" }] },
      { toolCalls: [{ name: "agent_change_mode", arguments: toDesign, callId: "m2" }] },
      { toolCalls: [{ name: "agent_change_mode", arguments: toReview, callId: "m3" }] },
      { text: "Reviewing." },
    );
    const result = await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Plan it" });
    expect(responseOf(result)).toMatchObject({ kind: "final", modeDisplayName: "Code Review" });
    expect(result.warnings).toEqual([
      {
        code: "MULTIPLE_MODE_CHANGES",
        message: "The model changed mode 3 times in this turn; the last change (review) applies.",
      },
    ]);
    const session = resultOf(await agent.service.getSession(PRINCIPAL, "s"));
    expect(session.mode).toBe("review");
    expect(session.modeHistory.map((entry) => [entry.previousMode, entry.newMode])).toEqual([
      ["general", "review"],
      ["review", "design"],
      ["design", "review"],
    ]);
  });

  it("warns MULTIPLE_MODE_CHANGES on the continuation round when the turn changed mode before its client tools", async () => {
    const agent = await createTestAgent({ config: withDesign });
    agent.provider.enqueue(
      {
        toolCalls: [
          { name: "agent_change_mode", arguments: toReview, callId: "m1" },
          { name: "read_file", arguments: { path: "a.ts" }, callId: "c1" },
        ],
      },
      { toolCalls: [{ name: "agent_change_mode", arguments: toDesign, callId: "m2" }] },
      { text: "Designing." },
    );
    const paused = await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Plan a.ts" });
    expect(responseOf(paused)).toMatchObject({ kind: "client_tool_continuation" });
    expect(paused.warnings).toEqual([]);
    const final = await agent.execute({
      sessionId: "s",
      turnId: "t1",
      toolResults: [{ toolCallId: "c1", executionMs: 1, resultJson: '"code"' }],
    });
    expect(responseOf(final)).toMatchObject({ kind: "final", modeDisplayName: "Design" });
    expect(final.warnings).toEqual([
      {
        code: "MULTIPLE_MODE_CHANGES",
        message: "The model changed mode 2 times in this turn; the last change (design) applies.",
      },
    ]);
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).mode).toBe("design");
  });

  it("does not warn for one change in each of two turns", async () => {
    const agent = await createTestAgent({ config: withDesign });
    agent.provider.enqueue(
      { toolCalls: [{ name: "agent_change_mode", arguments: toReview, callId: "m1" }] },
      { text: "Reviewing." },
      { toolCalls: [{ name: "agent_change_mode", arguments: toDesign, callId: "m2" }] },
      { text: "Designing." },
    );
    const first = await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Review" });
    const second = await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Design" });
    expect(responseOf(second)).toMatchObject({ modeDisplayName: "Design" });
    expect([first.warnings, second.warnings]).toEqual([[], []]);
  });

  it("answers an unknown mode with an error output to the model and changes nothing", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      {
        toolCalls: [
          {
            name: "agent_change_mode",
            arguments: { mode: "chaos", reason: "why not", branch: false },
            callId: "m1",
          },
        ],
      },
      { text: "Staying in general." },
      { text: "Still general." },
    );
    const result = await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Switch to chaos" });
    const final = responseOf(result);
    expect(final).toMatchObject({
      kind: "final",
      modeDisplayName: "General",
      primaryOutputText: "Staying in general.",
    });
    expect(result.warnings).toEqual([]);
    const message = 'Invalid arguments for agent_change_mode: mode must be one of "general", "review"';
    expect(agent.provider.requests[1]?.input).toEqual([
      { type: "function_call_output", callId: "m1", output: message, isError: true },
    ]);
    expect(final.kind === "final" && final.toolResults).toEqual([
      { toolCallId: "m1", name: "agent_change_mode", executionMs: 0, errorMessage: message },
    ]);
    const session = resultOf(await agent.service.getSession(PRINCIPAL, "s"));
    expect(session.mode).toBe("general");
    expect(session.modeHistory).toEqual([]);
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "ok" }));
    expect(agent.provider.requests[2]?.input[0]).toEqual({
      type: "user_message",
      content: [{ type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nok" }],
    });
  });

  it("takes the last successful change when a later one in the same response is refused", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      {
        toolCalls: [
          { name: "agent_change_mode", arguments: toReview, callId: "m1" },
          {
            name: "agent_change_mode",
            arguments: { mode: "nope", reason: "x", branch: false },
            callId: "m2",
          },
        ],
      },
      { text: "Reviewing." },
    );
    const result = await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Review" });
    expect(responseOf(result)).toMatchObject({ modeDisplayName: "Code Review" });
    expect(result.warnings).toEqual([]);
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).modeHistory).toHaveLength(1);
  });

  it("records nothing and welcomes nobody when the model switches to the mode it is in", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      {
        toolCalls: [
          {
            name: "agent_change_mode",
            arguments: { mode: "general", reason: "stay", branch: false },
            callId: "m1",
          },
        ],
      },
      { text: "Same mode." },
    );
    const final = responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Stay" }));
    expect(final).toMatchObject({ modeDisplayName: "General", primaryOutputText: "Same mode." });
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).modeHistory).toEqual([]);
  });
  it("refuses a change without branch, as its strict schema does, back to the model", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      {
        toolCalls: [{ name: "agent_change_mode", arguments: { mode: "review", reason: "r" }, callId: "m1" }],
      },
      { text: "Staying." },
    );
    const final = responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Review" }));
    const message = "Invalid arguments for agent_change_mode: branch is required";
    expect(agent.provider.requests[1]?.input).toEqual([
      { type: "function_call_output", callId: "m1", output: message, isError: true },
    ]);
    expect(final).toMatchObject({ modeDisplayName: "General", primaryOutputText: "Staying." });
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).modeHistory).toEqual([]);
  });

  it("answers the welcome alone, without a trailing separator, when the model adds no text", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { toolCalls: [{ name: "agent_change_mode", arguments: toReview, callId: "m1" }] },
      { text: "" },
    );
    const final = responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Review" }));
    expect(final).toMatchObject({
      modeDisplayName: "Code Review",
      primaryOutputText: "Switched to code review.",
    });
  });
});

/** The text of the first content part of the last user message a request sends. */
function firstPart(request: LlmRequest | undefined): string {
  const message = request?.input.findLast((item) => item.type === "user_message");
  const part = message?.type === "user_message" ? message.content[0] : undefined;
  if (part?.type !== "text") throw new Error("the request has no user message");
  return part.text;
}

const REVIEW_INSTRUCTIONS = "Review the code you are shown.";
const toldReview = (instruction: string) =>
  `[MODE: review]\n\n[MODE INSTRUCTIONS]\n${REVIEW_INSTRUCTIONS}\n\n[INSTRUCTION]\n${instruction}`;
const plain = (mode: string, instruction: string) => `[MODE: ${mode}]\n\n[INSTRUCTION]\n${instruction}`;
const providerDown = { failure: fail("PROVIDER_ERROR", "The provider is down.", { status: 500 }) };

describe("the mode's instructions after a mode change (docs/wire-mapping.md)", () => {
  it("opens the next user turn with [MODE INSTRUCTIONS] after agent_change_mode, [CONTEXT] second, and not again in the same mode", async () => {
    const agent = await createTestAgent({ chunks: [CHUNK] });
    agent.provider.enqueue(
      { toolCalls: [{ name: "agent_change_mode", arguments: toReview, callId: "m1" }] },
      { text: "Switched." },
      { text: "Reviewing." },
      { text: "Still reviewing." },
    );
    responseOf(
      await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Review please", workspaceId: "ws" }),
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Here it is" }));
    responseOf(await agent.execute({ sessionId: "s", turnId: "t3", instruction: "And this" }));

    expect(firstPart(agent.provider.requests[0])).toBe(plain("general", "Review please"));
    const told = agent.provider.requests[2]?.input.at(-1);
    expect(
      told?.type === "user_message" &&
        told.content.map((part) => part.type === "text" && part.text.split("\n")[0]),
    ).toEqual(["[MODE: review]", "[CONTEXT]"]);
    expect(firstPart(agent.provider.requests[2])).toBe(toldReview("Here it is"));
    expect(firstPart(agent.provider.requests[3])).toBe(plain("review", "And this"));
    // Every turn continued from the last response: no system message after the first call.
    expect(agent.provider.requests.slice(1).map((request) => request.input[0]?.type)).toEqual([
      "function_call_output",
      "user_message",
      "user_message",
    ]);
  });

  it("keeps a change whose turn then failed, and tells the next user turn (the failed turn's transcript was rolled back)", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { text: "Hello." },
      { toolCalls: [{ name: "agent_change_mode", arguments: toReview, callId: "m1" }] },
      providerDown,
      providerDown,
      { text: "Reviewing." },
      { text: "Still reviewing." },
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));
    errorsOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Review please" }));
    const afterFailure = resultOf(await agent.service.getSession(PRINCIPAL, "s"));
    expect(afterFailure.mode).toBe("review");
    expect(afterFailure.modeHistory.map((entry) => [entry.turnId, entry.newMode])).toEqual([
      ["t2", "review"],
    ]);

    // t3 is the first turn the model sees in review; it fails too, so t4 must tell the model again.
    errorsOf(await agent.execute({ sessionId: "s", turnId: "t3", instruction: "Here it is" }));
    expect(firstPart(agent.provider.requests[3])).toBe(toldReview("Here it is"));
    responseOf(await agent.execute({ sessionId: "s", turnId: "t4", instruction: "Here it is again" }));
    const t4 = agent.provider.requests[4];
    expect(t4?.continuation).toEqual({ type: "previous_response", responseId: "resp_1" });
    expect(firstPart(t4)).toBe(toldReview("Here it is again"));
    responseOf(await agent.execute({ sessionId: "s", turnId: "t5", instruction: "Done?" }));
    expect(firstPart(agent.provider.requests[5])).toBe(plain("review", "Done?"));
  });

  it("puts the current mode's instructions in the system message when the failed turn was the session's first", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { toolCalls: [{ name: "agent_change_mode", arguments: toReview, callId: "m1" }] },
      providerDown,
      { text: "Reviewing." },
    );
    errorsOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Review please" }));
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Here it is" }));
    expect(agent.provider.requests[2]?.continuation).toEqual({ type: "none" });
    expect(agent.provider.requests[2]?.input).toEqual([
      { type: "system_message", text: `You are Aptix.\n\n${REVIEW_INSTRUCTIONS}` },
      { type: "user_message", content: [{ type: "text", text: plain("review", "Here it is") }] },
    ]);
  });

  it("keeps a change whose turn was abandoned, and tells the abandoning user turn", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { text: "Hello." },
      {
        toolCalls: [
          { name: "agent_change_mode", arguments: toReview, callId: "m1" },
          { name: "read_file", arguments: { path: "a.ts" }, callId: "c1" },
        ],
      },
      { text: "Moved on." },
      { text: "Still reviewing." },
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Review a.ts" }));
    responseOf(await agent.execute({ sessionId: "s", turnId: "t3", instruction: "Never mind" }));

    const session = resultOf(await agent.service.getSession(PRINCIPAL, "s"));
    expect(session.mode).toBe("review");
    expect(session.turns.map((turn) => turn.status)).toEqual(["completed", "abandoned", "completed"]);
    // The abandoned call's input is sent again, then the new turn, told about the mode it never saw.
    expect(
      agent.provider.requests[2]?.input.map((item) => item.type === "user_message" && item.content[0]),
    ).toEqual([
      { type: "text", text: plain("general", "Review a.ts") },
      { type: "text", text: toldReview("Never mind") },
    ]);
    responseOf(await agent.execute({ sessionId: "s", turnId: "t4", instruction: "Next" }));
    expect(firstPart(agent.provider.requests[3])).toBe(plain("review", "Next"));
  });

  it("tells the user turn that follows a MODE_RESET the default mode's instructions", async () => {
    const { before, after } = await sessionInDroppedMode(1);
    expect(firstPart(before.provider.requests[2])).toBe(
      "[MODE: design]\n\n[MODE INSTRUCTIONS]\nDesign.\n\n[INSTRUCTION]\nMore",
    );
    after.provider.enqueue({ text: "General again." }, { text: "Still general." });
    const reset = await after.execute({ sessionId: "s", turnId: "t3", instruction: "Continue" });
    expect(reset.warnings.map((warning) => warning.code)).toEqual(["MODE_RESET"]);
    // The new instance's provider lost the old response id: the same items are replayed.
    const replayed = after.provider.requests[1];
    expect(after.provider.requests.map((request) => firstPart(request))).toEqual([
      "[MODE: general]\n\n[MODE INSTRUCTIONS]\nHelp with anything.\n\n[INSTRUCTION]\nContinue",
      "[MODE: general]\n\n[MODE INSTRUCTIONS]\nHelp with anything.\n\n[INSTRUCTION]\nContinue",
    ]);
    // A replayed system message holds the current mode's instructions too.
    expect(replayed?.continuation.type === "replay" && replayed.continuation.items[0]).toEqual({
      type: "system_message",
      text: "You are Aptix.\n\nHelp with anything.",
    });
    responseOf(await after.execute({ sessionId: "s", turnId: "t4", instruction: "Go on" }));
    expect(firstPart(after.provider.requests[2])).toBe(plain("general", "Go on"));
  });

  it("replays the boot prompt with the current mode's instructions to a provider that keeps no state", async () => {
    const agent = await createTestAgent();
    agent.stateless.enqueue(
      { toolCalls: [{ name: "agent_change_mode", arguments: toReview, callId: "m1" }] },
      { text: "Switched." },
      { text: "Reviewing." },
    );
    const stateless = { conversationContextId: "stateless" };
    responseOf(
      await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Review please", ...stateless }),
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Here it is" }));
    const systems = agent.stateless.requests.map((request) =>
      [...(request.continuation.type === "replay" ? request.continuation.items : []), ...request.input]
        .filter((item) => item.type === "system_message")
        .map((item) => item.type === "system_message" && item.text),
    );
    expect(systems).toEqual([
      ["You are Aptix (replayed).\n\nHelp with anything."],
      [`You are Aptix (replayed).\n\n${REVIEW_INSTRUCTIONS}`],
      [`You are Aptix (replayed).\n\n${REVIEW_INSTRUCTIONS}`],
    ]);
    expect(firstPart(agent.stateless.requests[2])).toBe(toldReview("Here it is"));
  });
});
