/**
 * The translation between the AI SDK's UI messages and the service's requests and events (docs/web-apps.md),
 * checked against the installed `ai` package itself: every part the service sends parses under its
 * `uiMessageChunkSchema`, `readUIMessageStream` assembles them into the message `useChat` shows, and the
 * messages of a session pass its `validateUIMessages`.
 */
import type { AgentExecuteResponse, InvokeResult, TurnEvent } from "@aptix/contracts";
import {
  asSchema,
  readUIMessageStream,
  type UIMessage,
  type UIMessageChunk,
  uiMessageChunkSchema,
  validateUIMessages,
} from "ai";
import { describe, expect, it } from "vitest";
import { readChatRequest, toolResultsOf } from "../src/http/chat/chat-request.js";
import { sessionUiMessages } from "../src/http/chat/session-ui-messages.js";
import { TurnUiChunks } from "../src/http/chat/turn-ui-chunks.js";

const META = { sessionId: "s-1", turnId: "t-1", modeDisplayName: "General" };
const delta = (id: string, text: string): TurnEvent => ({
  id,
  event: "output_text.delta",
  data: { delta: text },
});
const result = (round: number, data: InvokeResult<AgentExecuteResponse>): TurnEvent => ({
  id: `${round}-result`,
  event: "result",
  data,
});
const final = (extra: Record<string, unknown> = {}): InvokeResult<AgentExecuteResponse> => ({
  successful: true,
  result: { kind: "final", ...META, primaryOutputText: "Done.", ...extra },
  errors: [],
  warnings: [],
});
const APPROVAL = {
  toolCallId: "call_echo",
  name: "aptix_approve",
  argumentsJson: JSON.stringify({ tool: "ops__echo", argumentsJson: '{"text":"hi"}', server: "ops" }),
};
const READ = { toolCallId: "call_read", name: "read_file", argumentsJson: '{"path":"a.ts"}' };
const paused: InvokeResult<AgentExecuteResponse> = {
  successful: true,
  result: { kind: "client_tool_continuation", ...META, toolCalls: [APPROVAL, READ] },
  errors: [],
  warnings: [],
};

/** Every chunk checked by the `ai` package's own schema, then assembled as `useChat` does. */
async function assemble(chunks: UIMessageChunk[], message?: UIMessage): Promise<UIMessage | undefined> {
  const schema = asSchema(uiMessageChunkSchema);
  for (const chunk of chunks) {
    const parsed = await schema.validate?.(chunk);
    expect(parsed?.success, JSON.stringify(chunk)).toBe(true);
  }
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let last: UIMessage | undefined;
  for await (const snapshot of readUIMessageStream({ stream, ...(message ? { message } : {}) }))
    last = snapshot;
  return last;
}

describe("a turn's events as UI message parts", () => {
  it("streams text in steps: an intermediate call's text stays its own part, and finish carries the metadata", async () => {
    const chunks = new TurnUiChunks("t-1");
    const sent = [
      ...chunks.start(),
      ...chunks.event(delta("0-0", "Let me look. ")),
      ...chunks.event({ id: "0-1", event: "output_text.reset", data: {} }),
      ...chunks.event(delta("0-2", "The build ")),
      ...chunks.event(delta("0-3", "passes.")),
      ...chunks.event(result(0, final({ usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 } }))),
    ];
    expect(sent.map((chunk) => chunk.type)).toEqual([
      "start",
      "start-step",
      "text-start",
      "text-delta",
      "text-end",
      "finish-step",
      "start-step",
      "text-start",
      "text-delta",
      "text-delta",
      "text-end",
      "finish-step",
      "finish",
    ]);
    const message = await assemble(sent);
    expect(message?.id).toBe("t-1:a");
    expect(message?.parts.filter((part) => part.type === "text").map((part) => part.text)).toEqual([
      "Let me look. ",
      "The build passes.",
    ]);
    expect(message?.metadata).toEqual({
      ...META,
      usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 },
    });
  });

  it("gives finish the turn's cost as the trace prices it, null when unpriced, none when not given", async () => {
    const usage = { inputTokens: 3, outputTokens: 2, totalTokens: 5 };
    for (const costUsd of [0.00042, null]) {
      const chunks = new TurnUiChunks("t-1");
      const sent = [...chunks.start(), ...chunks.event(result(0, final({ usage })), { costUsd })];
      expect((await assemble(sent))?.metadata).toEqual({ ...META, usage, costUsd });
    }
    const plain = new TurnUiChunks("t-1");
    expect((await assemble([...plain.start(), ...plain.event(result(0, final()))]))?.metadata).toEqual(META);
  });

  it("ends a round at its client calls, an approval as its server tool's call asking first", async () => {
    const chunks = new TurnUiChunks("t-1");
    const sent = [...chunks.start(), ...chunks.event(result(0, paused))];
    expect(sent).toContainEqual({
      type: "tool-approval-request",
      approvalId: "call_echo",
      toolCallId: "call_echo",
    });
    expect(sent.at(-1)).toMatchObject({ type: "finish", finishReason: "tool-calls" });
    const message = await assemble(sent);
    expect(message?.parts).toEqual([
      { type: "step-start" },
      expect.objectContaining({
        type: "tool-ops__echo",
        toolCallId: "call_echo",
        state: "approval-requested",
        input: { text: "hi" },
        providerExecuted: true,
        approval: { id: "call_echo" },
      }),
      expect.objectContaining({ type: "tool-read_file", toolCallId: "call_read", state: "input-available" }),
    ]);
  });

  it("shows a final answer's server tools as provider-executed parts, with the arguments the trace kept", async () => {
    const chunks = new TurnUiChunks("t-1");
    const answer = final({
      toolResults: [{ toolCallId: "call_s", name: "search", executionMs: 3, resultJson: '{"hits":2}' }],
      files: [
        {
          name: "r.md",
          mimeType: "text/markdown",
          url: "/v1/files/f1",
          sizeBytes: 3,
          contentHash: `sha256:${"a".repeat(64)}`,
        },
      ],
      userWarnings: [{ code: "OUTPUT_TRUNCATED", message: "The answer was cut short." }],
    });
    const sent = [
      ...chunks.start(),
      ...chunks.event(result(0, answer), {
        serverCalls: [{ toolCallId: "call_s", argumentsJson: '{"q":"x"}' }],
      }),
    ];
    const message = await assemble(sent);
    expect(message?.parts).toEqual([
      { type: "step-start" },
      expect.objectContaining({
        type: "tool-search",
        state: "output-available",
        input: { q: "x" },
        output: { hits: 2 },
        providerExecuted: true,
      }),
      { type: "file", url: "/v1/files/f1", mediaType: "text/markdown" },
      {
        type: "data-aptix-warning",
        data: { code: "OUTPUT_TRUNCATED", message: "The answer was cut short." },
      },
    ]);
  });

  it("answers a failure with its code and message only, and a cancel with abort", async () => {
    const failure: InvokeResult<AgentExecuteResponse> = {
      successful: false,
      errors: [{ code: "PROVIDER_ERROR", message: "The LLM provider failed.", details: { status: 500 } }],
      warnings: [],
    };
    const sent = [...new TurnUiChunks("t-1").start(), ...new TurnUiChunks("t-1").event(result(0, failure))];
    expect(sent.slice(1)).toEqual([
      { type: "error", errorText: "PROVIDER_ERROR: The LLM provider failed." },
      { type: "finish", finishReason: "error" },
    ]);
    await assemble(sent);
    const cancelled = new TurnUiChunks("t-1").event(
      result(0, {
        successful: false,
        errors: [{ code: "TURN_CANCELLED", message: "Cancelled." }],
        warnings: [],
      }),
    );
    expect(cancelled).toEqual([{ type: "abort", reason: "Cancelled." }]);
  });

  it("replays a turn from its start past its client round: the user's answers follow the calls", async () => {
    const continuation = {
      sessionId: "s-1",
      turnId: "t-1",
      toolResults: [
        { toolCallId: "call_echo", executionMs: 0, resultJson: '{"approved":false,"message":"No."}' },
        { toolCallId: "call_read", executionMs: 0, resultJson: '"export {}"' },
      ],
    };
    const chunks = new TurnUiChunks("t-1", [
      { request: { sessionId: "s-1", turnId: "t-1", instruction: "Go" } },
      { request: continuation },
    ]);
    const sent = [
      ...chunks.start(),
      ...chunks.event(result(0, paused)),
      ...chunks.event(delta("1-0", "Not echoed.")),
      ...chunks.event(result(1, final())),
    ];
    expect(sent.filter((chunk) => chunk.type === "finish")).toHaveLength(1);
    const message = await assemble(sent);
    expect(message?.parts).toEqual([
      { type: "step-start" },
      expect.objectContaining({
        toolCallId: "call_echo",
        state: "output-denied",
        approval: expect.objectContaining({ approved: false, reason: "No." }),
      }),
      expect.objectContaining({ toolCallId: "call_read", state: "output-available", output: "export {}" }),
      { type: "step-start" },
      expect.objectContaining({ type: "text", text: "Not echoed." }),
    ]);
  });
});

describe("a useChat request as the service's request", () => {
  const user = (id: string, text: string) => ({ id, role: "user", parts: [{ type: "text", text }] });
  const body = (messages: unknown[], extra: Record<string, unknown> = {}) => ({
    id: "s-1",
    trigger: "submit-message",
    messages,
    ...extra,
  });
  const field = (input: unknown) => {
    const read = readChatRequest(input);
    return read.successful ? undefined : read.errors[0].details?.fields;
  };

  it("reads a last user message as a user turn: its id the turn's, text joined, images and files as input", () => {
    const read = readChatRequest(
      body(
        [
          user("t-0", "earlier"),
          {
            id: "t-1",
            role: "user",
            parts: [
              { type: "text", text: "Look" },
              { type: "file", mediaType: "image/png", url: "data:image/png;base64,iVBORw0KGgo=" },
              {
                type: "file",
                mediaType: "text/plain",
                filename: "notes.txt",
                url: "data:text/plain;base64,aGk=",
              },
              { type: "text", text: "at these." },
            ],
          },
        ],
        { workspaceId: "w-1" },
      ),
    );
    expect(read).toMatchObject({
      successful: true,
      result: {
        type: "user_turn",
        body: {
          sessionId: "s-1",
          turnId: "t-1",
          instruction: "Look\nat these.",
          clipboardImages: [{ id: "image-1", mimeType: "image/png", dataBase64: "iVBORw0KGgo=" }],
          inputArtifacts: [
            {
              relativePath: "notes.txt",
              fileName: "notes.txt",
              contents: "aGk=",
              encoding: "base64",
              origin: "user",
            },
          ],
          workspaceId: "w-1",
          stream: true,
        },
      },
    });
  });

  it("refuses bad bodies naming the field", () => {
    expect(field(body([user("t-1", "hi")], { id: "no spaces allowed" }))).toEqual([
      { path: "id", message: expect.stringMatching(/1–128 characters/) },
    ]);
    expect(field(body([user("t 1", "hi")]))).toEqual([
      { path: "messages[0].id", message: expect.any(String) },
    ]);
    expect(field(body([{ id: "x", role: "system", parts: [] }]))).toEqual([
      { path: "messages[0]", message: expect.stringMatching(/user message or the assistant message/) },
    ]);
    expect(field(body([{ id: "t-1", role: "assistant", parts: [] }]))).toEqual([
      { path: "messages[0]", message: expect.any(String) },
    ]);
    expect(field(body([]))).toEqual([{ path: "messages", message: expect.any(String) }]);
    expect(field(body([user("t-1", "hi")], { mode: "review" }))).toEqual([
      { path: "mode", message: "is not a field of a chat request" },
    ]);
    expect(
      field(
        body([
          {
            id: "t-1",
            role: "user",
            parts: [{ type: "file", mediaType: "image/png", url: "https://x/y.png" }],
          },
        ]),
      ),
    ).toEqual([{ path: "messages[0].parts[0].url", message: expect.any(String) }]);
  });

  it("reads regenerate as the last turn answered again, and a user message with messageId as an edit", () => {
    expect(readChatRequest(body([user("t-1", "hi")], { trigger: "regenerate-message" }))).toMatchObject({
      successful: true,
      result: { type: "regenerate", sessionId: "s-1" },
    });
    expect(readChatRequest(body([user("t-1", "hi")], { messageId: "t-1" }))).toMatchObject({
      successful: true,
      result: { type: "user_turn", turnId: "t-1", edits: "t-1" },
    });
    expect(field(body([user("t-1", "hi")], { messageId: "a b" }))).toEqual([
      { path: "messageId", message: expect.any(String) },
    ]);
    expect(field(body([user("t-1", "hi")], { trigger: "resubmit" }))).toEqual([
      { path: "trigger", message: expect.any(String) },
    ]);
  });

  it("reads an assistant message's answers to the awaited calls, in the calls' order", () => {
    const read = readChatRequest(
      body([
        user("t-1", "Go"),
        {
          id: "t-1:a",
          role: "assistant",
          parts: [
            {
              type: "tool-read_file",
              toolCallId: "call_read",
              state: "output-available",
              output: { text: "x" },
            },
            {
              type: "tool-ops__echo",
              toolCallId: "call_echo",
              state: "approval-responded",
              approval: { id: "call_echo", approved: false, reason: "Not now." },
            },
          ],
        },
      ]),
    );
    if (!read.successful || read.result.type !== "continuation") throw new Error("not a continuation");
    expect(toolResultsOf(read.result, [APPROVAL, READ])).toEqual({
      successful: true,
      result: [
        { toolCallId: "call_echo", executionMs: 0, resultJson: '{"approved":false,"message":"Not now."}' },
        { toolCallId: "call_read", executionMs: 0, resultJson: '{"text":"x"}' },
      ],
      errors: [],
      warnings: [],
    });
    const missing = toolResultsOf(read.result, [READ, { ...READ, toolCallId: "call_other" }]);
    expect(missing.successful ? [] : missing.errors[0].details?.fields).toEqual([
      { path: "messages[1].parts", message: 'has no answer for the awaited tool call "call_other"' },
    ]);
  });
});

describe("a session's messages as UIMessage[]", () => {
  const at = new Date("2026-03-02T09:15:00.000Z");

  it("gives each turn a user and an assistant message, and a turn awaiting tools its calls with their ids", async () => {
    const messages = await sessionUiMessages({
      sessionId: "s-1",
      messages: [
        { turnId: "t-0", role: "user", text: "Hi", createdAt: at },
        {
          turnId: "t-0",
          role: "assistant",
          text: "Hello.",
          toolCalls: [{ name: "read_file", argumentsJson: '{"path":"a"}', resultJson: '"x"' }],
          createdAt: at,
        },
        { turnId: "t-f", role: "user", text: "Fail", createdAt: at },
        {
          turnId: "t-f",
          role: "assistant",
          error: { code: "PROVIDER_ERROR", message: "Failed." },
          createdAt: at,
        },
        { turnId: "t-1", role: "user", text: "Go", createdAt: at },
        { turnId: "t-1", role: "assistant", createdAt: at },
      ],
      open: {
        turnId: "t-1",
        status: "awaiting_client_tools",
        rounds: [{ request: { sessionId: "s-1", turnId: "t-1", instruction: "Go" }, result: paused }],
      },
    });
    await validateUIMessages({ messages });
    expect(messages.map(({ id, role }) => [id, role])).toEqual([
      ["t-0", "user"],
      ["t-0:a", "assistant"],
      ["t-f", "user"],
      ["t-f:a", "assistant"],
      ["t-1", "user"],
      ["t-1:a", "assistant"],
    ]);
    expect(messages[1]?.parts).toContainEqual(
      expect.objectContaining({ type: "tool-read_file", state: "output-available", output: "x" }),
    );
    expect(messages[3]?.parts).toContainEqual({
      type: "data-aptix-error",
      data: { code: "PROVIDER_ERROR", message: "Failed." },
    });
    expect(messages[5]?.parts).toEqual([
      { type: "step-start" },
      expect.objectContaining({ toolCallId: "call_echo", state: "approval-requested" }),
      expect.objectContaining({ toolCallId: "call_read", state: "input-available" }),
    ]);
  });

  it("leaves out a running turn's assistant message: resuming its stream replays it", async () => {
    const messages = await sessionUiMessages({
      sessionId: "s-1",
      messages: [
        { turnId: "t-1", role: "user", text: "Go", createdAt: at },
        { turnId: "t-1", role: "assistant", createdAt: at },
      ],
      open: { turnId: "t-1", status: "running", rounds: [] },
    });
    expect(messages.map(({ id }) => id)).toEqual(["t-1"]);
  });
});
