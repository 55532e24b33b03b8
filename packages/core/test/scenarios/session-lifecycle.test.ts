import type { TurnEvent } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import { sessionInDroppedMode } from "../support/dropped-mode.js";
import {
  createTestAgent,
  errorsOf,
  PRINCIPAL,
  responseOf,
  resultOf,
  TEST_CATALOG,
} from "../support/test-agent.js";

describe("starting and keeping sessions", () => {
  it("starts a session in its conversation context's default mode, and keeps the context on later turns", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "Reviewing." }, { text: "Still reviewing." });
    const first = responseOf(
      await agent.execute({
        sessionId: "s",
        turnId: "t1",
        instruction: "Hi",
        conversationContextId: "reviewing",
      }),
    );
    expect(first.modeDisplayName).toBe("Code Review");
    const second = await agent.execute({
      sessionId: "s",
      turnId: "t2",
      instruction: "Go on",
      conversationContextId: "default",
    });
    expect(responseOf(second).modeDisplayName).toBe("Code Review");
    expect(second.warnings).toEqual([
      {
        code: "CONVERSATION_CONTEXT_KEPT",
        message:
          'The session keeps its conversation context "reviewing"; conversationContextId applies to new sessions only.',
      },
    ]);
    expect(agent.provider.requests[1]?.input[0]).toEqual({
      type: "user_message",
      content: [{ type: "text", text: "[MODE: review]\n\n[INSTRUCTION]\nGo on" }],
    });
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).conversationContextId).toBe("reviewing");
  });

  it("refuses an unknown conversationContextId without creating a session", async () => {
    const agent = await createTestAgent();
    const refused = await agent.execute({
      sessionId: "s",
      turnId: "t1",
      instruction: "Hi",
      conversationContextId: "nope",
    });
    expect(refused).toEqual({
      successful: false,
      errors: [
        {
          code: "VALIDATION_FAILED",
          message: "conversationContextId names no configured conversation context.",
          details: {
            fields: [{ path: "conversationContextId", message: "names no configured conversation context" }],
          },
        },
      ],
      warnings: [],
    });
    expect(errorsOf(await agent.service.getSession(PRINCIPAL, "s"))[0].code).toBe("SESSION_NOT_FOUND");
    expect(agent.provider.requests).toEqual([]);
  });

  it("puts a session whose mode is no longer configured back in its default mode, with a warning", async () => {
    // The operator drops the design mode; a new server instance shares the store.
    const { before, after } = await sessionInDroppedMode();
    expect(resultOf(await before.service.getSession(PRINCIPAL, "s")).mode).toBe("design");
    after.provider.enqueue({ text: "General again." });
    const result = await after.execute({ sessionId: "s", turnId: "t2", instruction: "Continue" });
    expect(responseOf(result)).toMatchObject({
      modeDisplayName: "General",
      primaryOutputText: "General again.",
    });
    expect(result.warnings).toEqual([
      { code: "MODE_RESET", message: "Mode design is no longer configured; the session is back in general." },
    ]);
    const summary = resultOf(await after.service.getSession(PRINCIPAL, "s"));
    expect(summary.mode).toBe("general");
    expect(
      summary.modeHistory.map(({ previousMode, newMode, turnId, reason }) => ({
        previousMode,
        newMode,
        turnId,
        reason,
      })),
    ).toEqual([
      { previousMode: "general", newMode: "design", turnId: "t1", reason: "plan" },
      {
        previousMode: "design",
        newMode: "general",
        turnId: "t2",
        reason: "Mode design is no longer configured.",
      },
    ]);
    // The new instance's provider does not know the old response id: it replays the transcript instead.
    expect(after.provider.requests.map((request) => request.continuation.type)).toEqual([
      "previous_response",
      "replay",
    ]);
  });

  it("fails the turn when context retrieval throws, and the session goes on", async () => {
    const agent = await createTestAgent();
    const retrieve = agent.retriever.retrieve.bind(agent.retriever);
    let broken = true;
    agent.retriever.retrieve = async (query) => {
      if (broken) throw new Error("vector store unreachable");
      return retrieve(query);
    };
    const failed = await agent.execute({
      sessionId: "s",
      turnId: "t1",
      instruction: "Hi",
      workspaceId: "ws",
    });
    expect(errorsOf(failed)).toEqual([
      {
        code: "INTERNAL",
        // What was thrown is the operator's (the observer's `fault`), never the answer's.
        message: "The turn failed unexpectedly; the request id identifies it in the service's logs.",
      },
    ]);
    expect(agent.provider.requests).toEqual([]);
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).turns.map((turn) => turn.status)).toEqual(
      ["failed"],
    );
    broken = false;
    agent.provider.enqueue({ text: "Works." });
    expect(
      responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Hi" })),
    ).toMatchObject({
      primaryOutputText: "Works.",
    });
  });

  it("fails the turn when its context's provider is not configured", async () => {
    const config = {
      ...TEST_CATALOG,
      conversationContexts: [
        ...TEST_CATALOG.conversationContexts,
        { id: "orphan", bootPrompt: "x", model: "m", provider: "missing" },
      ],
    };
    const agent = await createTestAgent({ config });
    const failed = await agent.execute({
      sessionId: "s",
      turnId: "t1",
      instruction: "Hi",
      conversationContextId: "orphan",
    });
    expect(errorsOf(failed)).toEqual([
      {
        code: "INTERNAL",
        message: 'No LLM provider "missing" is configured for conversation context orphan.',
      },
    ]);
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).turns[0]?.status).toBe("failed");
  });
});

describe("final answers", () => {
  it("warns the user when the answer was cut off or filtered", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { text: "Partial", finishReason: "length" },
      { text: "", finishReason: "content_filter" },
    );
    const truncated = responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Long" }));
    expect(truncated).toMatchObject({
      primaryOutputText: "Partial",
      userWarnings: [
        { code: "OUTPUT_TRUNCATED", message: "The answer was cut off at the model's output limit." },
      ],
    });
    const filtered = responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Bad" }));
    expect(filtered).toMatchObject({
      primaryOutputText: "",
      userWarnings: [{ code: "CONTENT_FILTERED", message: "The provider withheld part of the answer." }],
    });
  });

  it("omits optional buckets rather than sending them empty", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "Plain." });
    const final = responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));
    expect(Object.keys(final).sort()).toEqual([
      "kind",
      "modeDisplayName",
      "primaryOutputText",
      "sessionId",
      "turnId",
      "usage",
    ]);
  });

  it("streams the text of every call of the round, a reset after each that is not the answer, then one result event", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { text: "Let me check.", toolCalls: [{ name: "lookup", arguments: { query: "x" } }] },
      { text: "Found it here." },
    );
    const events: TurnEvent[] = [];
    const result = await agent.service.execute(
      { sessionId: "s", turnId: "t1", instruction: "Go", stream: true },
      PRINCIPAL,
      { onEvent: (event) => events.push(event) },
    );
    expect(responseOf(result)).toMatchObject({ primaryOutputText: "Found it here." });
    const deltas = events.filter((event) => event.event === "output_text.delta");
    expect(deltas.map((event) => (event.data as { delta: string }).delta).join("")).toBe(
      "Let me check.Found it here.",
    );
    const text = events.filter((event) => event.event !== "result");
    expect(text.map((event) => event.id)).toEqual(text.map((_, index) => `0-${index}`));
    expect(text.filter((event) => event.event === "output_text.reset")).toHaveLength(1);
    expect(events.at(-1)).toEqual({ id: "0-result", event: "result", data: result });
    expect(events.filter((event) => event.event === "result")).toHaveLength(1);
  });
});
