import { describe, expect, it } from "vitest";
import type { TurnObserver } from "../../src/index.js";
import { createTestAgent, responseOf } from "../support/test-agent.js";

type Seen = { event: "start" | "end"; kind: keyof TurnObserver; info: unknown; outcome?: unknown };

/** An observer that notes each run's start and end, in order, with what it was given and what the run gave. */
function recordingObserver(): { observer: TurnObserver; seen: Seen[] } {
  const seen: Seen[] = [];
  const watch =
    (kind: keyof TurnObserver) =>
    async <T>(info: unknown, run: () => Promise<T>): Promise<T> => {
      seen.push({ event: "start", kind, info });
      const outcome = await run();
      seen.push({ event: "end", kind, info, outcome });
      return outcome;
    };
  return {
    seen,
    observer: {
      round: watch("round"),
      llmCall: watch("llmCall"),
      toolRun: watch("toolRun"),
      retrieval: watch("retrieval"),
      compaction: watch("compaction"),
    },
  };
}

const SECRET_INSTRUCTION = "Summarize the confidential merger memo";

describe("a turn observer (traces and metrics watch the layers, docs/operations.md)", () => {
  it("sees the round around its retrieval, each LLM call and each server tool run, with their outcomes", async () => {
    const { observer, seen } = recordingObserver();
    const agent = await createTestAgent({
      observer,
      chunks: [{ chunkId: "c1", path: "a.ts", startLine: 1, endLine: 1, language: "typescript", text: "x" }],
    });
    agent.provider.enqueue(
      { toolCalls: [{ name: "lookup", arguments: { query: "q" }, callId: "call_1" }] },
      { text: "Done." },
    );
    responseOf(
      await agent.execute({
        sessionId: "s",
        turnId: "t1",
        instruction: SECRET_INSTRUCTION,
        workspaceId: "ws",
      }),
    );

    expect(seen.map(({ event, kind }) => `${event} ${kind}`)).toEqual([
      "start round",
      "start retrieval",
      "end retrieval",
      "start llmCall",
      "end llmCall",
      "start toolRun",
      "end toolRun",
      "start llmCall",
      "end llmCall",
      "end round",
    ]);
    const started = seen.filter((entry) => entry.event === "start").map((entry) => entry.info);
    expect(started).toEqual([
      { sessionId: "s", turnId: "t1", round: 0, mode: "general", provider: "scripted", model: "gpt-test" },
      { workspaceId: "ws", limit: expect.any(Number) },
      { provider: "scripted", model: "gpt-test", streaming: false },
      { name: "lookup", callId: "call_1" },
      { provider: "scripted", model: "gpt-test", streaming: false },
    ]);
    // What an observer is given names the work: never the user's words.
    expect(JSON.stringify(started)).not.toContain(SECRET_INSTRUCTION);

    const ended = (kind: keyof TurnObserver) =>
      seen.filter((entry) => entry.event === "end" && entry.kind === kind).map((entry) => entry.outcome);
    expect(ended("round")).toEqual([
      expect.objectContaining({ successful: true, result: expect.objectContaining({ kind: "final" }) }),
    ]);
    expect(ended("llmCall")).toEqual([
      expect.objectContaining({
        successful: true,
        result: expect.objectContaining({ finishReason: "tool_calls" }),
      }),
      expect.objectContaining({
        successful: true,
        result: expect.objectContaining({ finishReason: "stop" }),
      }),
    ]);
    expect(ended("toolRun")).toEqual([
      expect.objectContaining({
        successful: true,
        result: { result: { found: "answer to q" }, resultJson: '{"found":"answer to q"}' },
      }),
    ]);
    expect(ended("retrieval")).toEqual([
      { type: "found", chunks: [expect.objectContaining({ chunkId: "c1" })] },
    ]);
    expect(agent.provider.requests).toHaveLength(2);
  });

  it("sees a failed server tool run as the failure that fails the turn", async () => {
    const { observer, seen } = recordingObserver();
    const agent = await createTestAgent({ observer });
    agent.provider.enqueue({
      toolCalls: [{ name: "lookup", arguments: { query: "q", explode: true }, callId: "call_1" }],
    });
    await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Go" });
    const outcomes = seen
      .filter((entry) => entry.event === "end")
      .map((entry) => [entry.kind, entry.outcome]);
    expect(outcomes).toEqual([
      ["llmCall", expect.objectContaining({ successful: true })],
      [
        "toolRun",
        expect.objectContaining({
          successful: false,
          errors: [expect.objectContaining({ code: "TOOL_FAILED" })],
        }),
      ],
      [
        "round",
        expect.objectContaining({
          successful: false,
          errors: [expect.objectContaining({ code: "TOOL_FAILED" })],
        }),
      ],
    ]);
  });
});
