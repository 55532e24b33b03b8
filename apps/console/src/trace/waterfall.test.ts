import type { TurnTraceJson } from "@aptix/client";
import { describe, expect, it } from "vitest";
import { traceToWaterfall } from "./waterfall.js";

const at = (ms: number) => new Date(Date.UTC(2026, 11, 2, 8, 0, 0) + ms).toISOString();

function llmCall(
  index: number,
  startMs: number,
  durationMs: number,
  response: Record<string, unknown> | null,
) {
  return {
    index,
    request: { model: "gpt-5-mini" },
    response,
    providerRequest: {},
    providerResponse: {},
    error: null,
    startedAt: at(startMs),
    durationMs,
  };
}

function trace(parts: Pick<TurnTraceJson, "llmCalls" | "toolExecutions">): TurnTraceJson {
  return {
    turnId: "t1",
    sequence: 1,
    status: "completed",
    mode: "general",
    usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    error: null,
    createdAt: at(0),
    completedAt: at(1_000),
    rounds: [],
    costUsd: null,
    ...parts,
  } as TurnTraceJson;
}

describe("traceToWaterfall", () => {
  it("puts each call at its start with its model and tokens, and its tools one after another where it ended", () => {
    const waterfall = traceToWaterfall(
      trace({
        llmCalls: [
          llmCall(0, 10, 200, {
            usage: { inputTokens: 120, outputTokens: 30 },
            toolCalls: [{ callId: "c1" }, { callId: "c2" }],
          }),
          llmCall(1, 400, 100, { usage: { inputTokens: 200, outputTokens: 12 }, toolCalls: [] }),
        ],
        toolExecutions: [
          { toolCallId: "c1", name: "read_file", argumentsJson: "{}", resultJson: "{}", executionMs: 50 },
          {
            toolCallId: "c2",
            name: "search",
            argumentsJson: "{}",
            errorMessage: "no index",
            executionMs: 40,
          },
        ],
      }),
    );
    expect(waterfall).toEqual({
      bars: [
        {
          kind: "llm",
          index: 0,
          model: "gpt-5-mini",
          inputTokens: 120,
          outputTokens: 30,
          startMs: 10,
          durationMs: 200,
          error: undefined,
        },
        { kind: "tool", name: "read_file", startMs: 210, durationMs: 50, outcome: "ok" },
        { kind: "tool", name: "search", startMs: 260, durationMs: 40, outcome: "error" },
        {
          kind: "llm",
          index: 1,
          model: "gpt-5-mini",
          inputTokens: 200,
          outputTokens: 12,
          startMs: 400,
          durationMs: 100,
          error: undefined,
        },
      ],
      totalMs: 500,
    });
  });

  it("puts each tool run at the start the service recorded", () => {
    const waterfall = traceToWaterfall(
      trace({
        llmCalls: [
          llmCall(0, 10, 200, {
            usage: { inputTokens: 1, outputTokens: 2 },
            toolCalls: [{ callId: "c1" }, { callId: "c2" }],
          }),
          llmCall(1, 600, 100, { usage: { inputTokens: 3, outputTokens: 4 }, toolCalls: [] }),
        ],
        toolExecutions: [
          {
            toolCallId: "c1",
            name: "read_file",
            argumentsJson: "{}",
            resultJson: "{}",
            startedAt: at(215),
            executionMs: 20,
          },
          // Started well after the run before it ended (an approval waited): placed there, not right after it.
          {
            toolCallId: "c2",
            name: "deploy",
            argumentsJson: "{}",
            resultJson: "{}",
            startedAt: at(450),
            executionMs: 120,
          },
        ],
      }),
    );
    expect(waterfall.bars.map((bar) => [bar.kind, bar.startMs, bar.durationMs])).toEqual([
      ["llm", 10, 200],
      ["tool", 215, 20],
      ["tool", 450, 120],
      ["llm", 600, 100],
    ]);
    expect(waterfall.totalMs).toBe(700);
  });

  it("shows a declined approval as declined and a call whose request retention dropped by its wire model", () => {
    const call = {
      ...llmCall(0, 0, 80, null),
      request: null,
      providerRequest: { model: "claude-haiku-4-5" },
    };
    const waterfall = traceToWaterfall(
      trace({
        llmCalls: [call],
        toolExecutions: [
          {
            toolCallId: "c9",
            name: "deploy",
            argumentsJson: "{}",
            approval: { approved: false, decidedBy: "local" },
            errorMessage: "The user did not approve this call of deploy.",
            executionMs: 0,
          },
        ],
      }),
    );
    expect(waterfall.bars).toEqual([
      {
        kind: "llm",
        index: 0,
        model: "claude-haiku-4-5",
        inputTokens: undefined,
        outputTokens: undefined,
        startMs: 0,
        durationMs: 80,
        error: undefined,
      },
      { kind: "tool", name: "deploy", startMs: 80, durationMs: 0, outcome: "declined" },
    ]);
  });
});
