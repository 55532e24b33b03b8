import type { LlmRequest, ToolDefinition, TranscriptItem } from "@aptix/core";
import { describe, expect, it } from "vitest";
import { DemoProvider } from "../src/demo/demo-provider.js";

const tool = (name: string): ToolDefinition => ({ name, description: name, parameters: { type: "object" } });
const TOOLS = [tool("read_file"), tool("create_file")];

const userMessage = (instruction: string, ...more: string[]): TranscriptItem => ({
  type: "user_message",
  content: [`[MODE: general]\n\n[INSTRUCTION]\n${instruction}`, ...more].map((text) => ({
    type: "text",
    text,
  })),
});

function request(items: TranscriptItem[], tools = TOOLS): LlmRequest {
  const [newest, ...earlier] = [...items].reverse();
  return {
    model: "aptix-demo",
    continuation: { type: "replay", items: earlier.reverse() },
    input: newest ? [newest] : [],
    tools,
    toolChoice: { type: "auto" },
  };
}

async function answer(items: TranscriptItem[], tools = TOOLS) {
  const result = await new DemoProvider().call(request(items, tools));
  if (!result.successful) throw new Error(JSON.stringify(result.errors));
  return result.result;
}

describe("the demo model", () => {
  it("asks the client to read the file an instruction names, with the same call id for the same conversation", async () => {
    const items = [userMessage("What does src/app.ts export?")];
    const first = await answer(items);
    expect(first.toolCalls).toEqual([
      {
        callId: expect.stringMatching(/^call_[0-9a-f]{12}$/),
        name: "read_file",
        argumentsJson: JSON.stringify({ path: "src/app.ts", startLine: null, endLine: null }),
      },
    ]);
    expect(first.finishReason).toBe("tool_calls");
    expect((await answer(items)).toolCalls).toEqual(first.toolCalls);
  });

  it("reads the file the turn's context shows when the instruction names none, and never offered tools", async () => {
    const context = "[CONTEXT]\nPath: src/cart.ts\nexport function cartTotal() {}";
    expect(
      (await answer([userMessage("Why is cartTotal 0?", context)])).toolCalls[0]?.argumentsJson,
    ).toContain('"path":"src/cart.ts"');
    const withoutTools = await answer([userMessage("What does src/app.ts export?")], []);
    expect([withoutTools.toolCalls, withoutTools.text]).toEqual([[], expect.stringMatching(/^You said: /)]);
  });

  it("answers a read file's exports, naming its path, and a failed tool's error", async () => {
    const call: TranscriptItem = {
      type: "function_call",
      callId: "call_1",
      name: "read_file",
      argumentsJson: '{"path":"src/app.ts"}',
    };
    const output = (text: string, isError = false): TranscriptItem => ({
      type: "function_call_output",
      callId: "call_1",
      output: text,
      isError,
    });
    const read = await answer([userMessage("x"), call, output(JSON.stringify("export const app = 1;\n"))]);
    expect([read.text, read.finishReason, read.toolCalls]).toEqual([
      "`src/app.ts` exports `app` (2 lines).",
      "stop",
      [],
    ]);
    expect((await answer([userMessage("x"), call, output("no such file", true)])).text).toBe(
      "read_file failed: no such file",
    );
  });

  it("asks to write the file an instruction asks for through create_file", async () => {
    const { toolCalls } = await answer([userMessage("Please write notes.md for me")]);
    expect(toolCalls.map((call) => [call.name, JSON.parse(call.argumentsJson)])).toEqual([
      [
        "create_file",
        {
          name: "notes.md",
          mimeType: "text/markdown",
          content: "Written by the Aptix demo model, asked: Please write notes.md for me\n",
          encoding: "utf8",
          description: "A file the demo model wrote.",
        },
      ],
    ]);
  });

  it("summarises a conversation when compaction asks, listing what the user asked", async () => {
    const conversation: TranscriptItem = {
      type: "user_message",
      content: [
        {
          type: "text",
          text: '[CONVERSATION]\n\n[USER]\n[MODE: general]\n\n[INSTRUCTION]\nRead a.ts\n\n[TOOL CALL read_file] {"path":"a.ts"}',
        },
      ],
    };
    const { text } = await answer(
      [{ type: "system_message", text: "You write the summary" }, conversation],
      [],
    );
    expect(text).toContain("- Read a.ts");
    expect(text).toContain("Files touched: a.ts");
  });

  it("streams its text a word at a time, and fails the call, never throws, once cancelled", async () => {
    const deltas: string[] = [];
    const streamed = await new DemoProvider().call(request([userMessage("Hello there")]), {
      onTextDelta: (delta) => deltas.push(delta),
    });
    expect(streamed.successful && streamed.result.text).toBe(deltas.join(""));
    expect(deltas.length).toBeGreaterThan(5);

    const cancelled = new AbortController();
    const cancelledCall = new DemoProvider().call(request([userMessage("Hello there")]), {
      onTextDelta: () => cancelled.abort(),
      signal: cancelled.signal,
    });
    expect(await cancelledCall).toMatchObject({
      successful: false,
      errors: [{ code: "PROVIDER_ERROR", details: { provider: "demo", reason: "aborted" } }],
    });
  });
});
