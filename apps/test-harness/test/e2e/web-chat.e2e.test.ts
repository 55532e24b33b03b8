/**
 * Web apps through the AI SDK (docs/web-apps.md), over real HTTP on PGlite and Postgres, against the scripted
 * OpenAI server: the real `ai` package's `DefaultChatTransport` sends and reconnects (it checks every part against
 * `ai`'s own chunk schema) and `readUIMessageStream` assembles the messages, as `useChat` does. A client tool is
 * answered and an approval given or declined as `addToolOutput` / `addToolApprovalResponse` leave the message,
 * and sent when `sendAutomaticallyWhen`'s own predicates say so.
 */
import { step } from "@aptix/testing-llm-servers";
import {
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  readUIMessageStream,
  type UIMessage,
  type UIMessageChunk,
  validateUIMessages,
} from "ai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  API_KEYS,
  E2E_CATALOG,
  expectOk,
  lastToolOutputs,
  startTestService,
  TEST_MODEL,
  type TestService,
  uniqueId,
  writeCatalog,
} from "../../src/e2e/index.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

/** A context on a model no price names: its turns cost null. */
const UNPRICED_CONTEXT = "unpriced";

/**
 * `create_file` asks first; `save_file`, the same built-in, runs on the model's word. The test model has a price
 * (USD per million tokens), the unpriced context's model none.
 */
const CHAT_CATALOG = {
  ...E2E_CATALOG,
  conversationContexts: [
    ...E2E_CATALOG.conversationContexts,
    { ...E2E_CATALOG.conversationContexts[0], id: UNPRICED_CONTEXT, model: "gpt-e2e-unpriced" },
  ],
  prices: { [TEST_MODEL]: { inputPerMTok: 2, cachedInputPerMTok: 0.5, outputPerMTok: 8 } },
  modes: [
    { ...E2E_CATALOG.modes[0], tools: ["read_file", "create_file", "save_file"] },
    ...E2E_CATALOG.modes.slice(1),
  ],
  serverTools: [
    { name: "create_file", builtin: "create_file", approval: "always" },
    { name: "save_file", builtin: "create_file" },
  ],
};
const NOTES = {
  name: "notes.md",
  mimeType: "text/markdown",
  content: "# Notes",
  encoding: "utf8",
  description: null,
};

const userMessage = (id: string, text: string): UIMessage => ({
  id,
  role: "user",
  parts: [{ type: "text", text }],
});

describe.each(["pglite", "postgres"] as const)("useChat's transport against the service on %s", (store) => {
  let service: TestService;
  /** Response headers of the last POST, as the transport's fetch saw them. */
  let lastHeaders: Headers | undefined;

  beforeAll(async () => {
    service = await startTestService({ store, env: { APTIX_CONFIG: await writeCatalog(CHAT_CATALOG) } });
  });
  afterAll(() => service?.close());

  const transport = () =>
    new DefaultChatTransport({
      api: `${service.url}/v1/chat`,
      headers: { authorization: `Bearer ${API_KEYS.alice}` },
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        lastHeaders = response.headers;
        return response;
      },
    });

  /** Every part of a stream, and the message `useChat` makes of them (continuing `message` when given). */
  async function read(stream: ReadableStream<UIMessageChunk>, message?: UIMessage) {
    const [parts, assembled] = stream.tee();
    const chunks: UIMessageChunk[] = [];
    const collected = (async () => {
      for await (const chunk of parts) chunks.push(chunk);
    })();
    let last: UIMessage | undefined;
    for await (const snapshot of readUIMessageStream({
      stream: assembled,
      ...(message ? { message } : {}),
    })) {
      last = snapshot;
    }
    await collected;
    if (last === undefined) throw new Error("the stream made no message");
    return { chunks, message: last };
  }

  /** Sends the conversation as `useChat` does after a user message or an answered tool call: the answer's parts. */
  const post = (chatId: string, messages: UIMessage[], messageId?: string) =>
    transport().sendMessages({
      chatId,
      messages,
      trigger: "submit-message",
      messageId,
      abortSignal: undefined,
    });

  /** The stream's reader, once the answer's text is under way. */
  async function readUntilText(stream: ReadableStream<UIMessageChunk>) {
    const reader = stream.getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      if (chunk.value.type === "text-delta") break;
    }
    return reader;
  }

  /** `post`, and the message `useChat` makes of the answer. */
  async function send(chatId: string, messages: UIMessage[], messageId?: string) {
    const stream = await post(chatId, messages, messageId);
    const last = messages.at(-1);
    return read(stream, last?.role === "assistant" ? last : undefined);
  }

  const textOf = (message: UIMessage) =>
    message.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");

  it("streams a text answer as one assistant message, with the turn's metadata and the stream's headers", async () => {
    const chatId = uniqueId(`chat-text-${store}`);
    service.harness.enqueue(
      step.text(["Hello ", "from Aptix."], { usage: { input_tokens: 1_000, output_tokens: 100 } }),
    );
    const { chunks, message } = await send(chatId, [userMessage("t1", "Say hello.")]);
    expect(message).toMatchObject({
      id: "t1:a",
      role: "assistant",
      // 1,000 input tokens at 2 USD and 100 output tokens at 8 USD per million.
      metadata: {
        sessionId: chatId,
        turnId: "t1",
        modeDisplayName: "General",
        usage: { inputTokens: 1_000, outputTokens: 100 },
        costUsd: 0.0028,
      },
    });
    expect(textOf(message)).toBe("Hello from Aptix.");
    expect(chunks.map((chunk) => chunk.type)).toEqual([
      "start",
      "start-step",
      "text-start",
      "text-delta",
      "text-delta",
      "text-end",
      "finish-step",
      "finish",
    ]);
    expect(lastHeaders?.get("x-vercel-ai-ui-message-stream")).toBe("v1");
    expect(lastHeaders?.get("content-type")).toBe("text/event-stream");
    expect(lastHeaders?.get("x-accel-buffering")).toBe("no");
    // The session is the service's own: its messages, as useChat's initial messages.
    const initial = await messagesOf(chatId);
    expect(initial.map(({ id }) => id)).toEqual(["t1", "t1:a"]);
    expect(textOf(initial[1] as UIMessage)).toBe("Hello from Aptix.");
    // Another principal's chat answers as one that does not exist.
    const asBob = { authorization: `Bearer ${API_KEYS.bob}` };
    const bobs = await fetch(`${service.url}/v1/chat/${chatId}/messages`, { headers: asBob });
    expect(await bobs.json()).toEqual([]);
    const stop = await fetch(`${service.url}/v1/chat/${chatId}/stop`, { method: "POST", headers: asBob });
    expect(stop.status).toBe(404);
  });

  it("gives a turn on an unpriced model a null cost, in the context the request names", async () => {
    const chatId = uniqueId(`chat-unpriced-${store}`);
    service.harness.enqueue(step.text("Hello."));
    const stream = await transport().sendMessages({
      chatId,
      messages: [userMessage("t1", "Say hello.")],
      trigger: "submit-message",
      messageId: undefined,
      abortSignal: undefined,
      body: { conversationContextId: UNPRICED_CONTEXT },
    });
    const { message } = await read(stream);
    expect(message.metadata).toMatchObject({ turnId: "t1", costUsd: null });
  });

  it("ends the stream at a client tool call and goes on once its output comes back", async () => {
    const chatId = uniqueId(`chat-client-${store}`);
    service.harness.enqueue(
      step.functionCalls({ name: "read_file", arguments: { path: "src/a.ts" }, callId: "call_read" }),
    );
    const user = userMessage("t1", "What does src/a.ts export?");
    const paused = await send(chatId, [user]);
    expect(paused.chunks.at(-3)).toEqual({
      type: "tool-input-available",
      toolCallId: "call_read",
      toolName: "read_file",
      input: { path: "src/a.ts" },
    });
    expect(paused.chunks.at(-1)).toMatchObject({ type: "finish", finishReason: "tool-calls" });
    // What addToolOutput leaves in the message, after onToolCall ran the tool in the browser.
    const answered: UIMessage = {
      ...paused.message,
      parts: paused.message.parts.map((part) =>
        "toolCallId" in part && part.toolCallId === "call_read"
          ? { ...part, state: "output-available", output: "export const a = 1;" }
          : part,
      ) as UIMessage["parts"],
    };
    expect(lastAssistantMessageIsCompleteWithToolCalls({ messages: [user, answered] })).toBe(true);
    // The messages of a turn awaiting tools give its calls their own ids, so a reloaded page can answer them.
    expect((await messagesOf(chatId))[1]?.parts).toContainEqual(
      expect.objectContaining({ type: "tool-read_file", toolCallId: "call_read", state: "input-available" }),
    );

    service.harness.enqueue(step.text(["It exports ", "a."]));
    const { message } = await send(chatId, [user, answered], answered.id);
    expect(message.id).toBe("t1:a");
    expect(message.parts).toContainEqual(
      expect.objectContaining({
        toolCallId: "call_read",
        state: "output-available",
        output: "export const a = 1;",
      }),
    );
    expect(textOf(message)).toBe("It exports a.");
    expect(lastToolOutputs(service.harness)).toEqual({ call_read: JSON.stringify("export const a = 1;") });
  });

  it("asks before a server tool that asks first, and runs it once approved", async () => {
    const chatId = uniqueId(`chat-approve-${store}`);
    const { user, asked } = await askApproval(chatId);
    service.harness.enqueue(step.text("Created notes.md."));
    const approved = respond(asked, { approved: true });
    expect(lastAssistantMessageIsCompleteWithApprovalResponses({ messages: [user, approved] })).toBe(true);
    const { message } = await send(chatId, [user, approved], approved.id);
    expect(message.parts).toContainEqual(
      expect.objectContaining({
        type: "tool-create_file",
        toolCallId: "call_create",
        state: "output-available",
        providerExecuted: true,
        output: expect.objectContaining({ name: "notes.md" }),
      }),
    );
    expect(message.parts).toContainEqual({
      type: "file",
      mediaType: "text/markdown",
      url: expect.stringMatching(/\/v1\/files\//),
    });
    expect(textOf(message)).toBe("Created notes.md.");
  });

  it("tells the model a declined call was not approved, with the user's reason, and runs nothing", async () => {
    const chatId = uniqueId(`chat-decline-${store}`);
    const { user, asked } = await askApproval(chatId);
    service.harness.enqueue(step.text("Understood."));
    const declined = respond(asked, { approved: false, reason: "Not today." });
    const { chunks, message } = await send(chatId, [user, declined], declined.id);
    expect(chunks).toContainEqual({ type: "tool-output-denied", toolCallId: "call_create" });
    expect(message.parts).toContainEqual(
      expect.objectContaining({ toolCallId: "call_create", state: "output-denied" }),
    );
    expect(message.parts.some((part) => part.type === "file")).toBe(false);
    expect(lastToolOutputs(service.harness).call_create).toBe(
      JSON.stringify({ error: "The user did not approve this call of create_file. Not today." }),
    );
  });

  it("shows a server tool that runs on the model's word as a provider-executed part with its input", async () => {
    const chatId = uniqueId(`chat-server-${store}`);
    service.harness.enqueue(step.functionCalls({ name: "save_file", arguments: NOTES, callId: "call_save" }));
    service.harness.enqueue(step.text("Saved."));
    const { message } = await send(chatId, [userMessage("t1", "Save notes.")]);
    expect(message.parts).toContainEqual(
      expect.objectContaining({
        type: "tool-save_file",
        toolCallId: "call_save",
        state: "output-available",
        providerExecuted: true,
        input: NOTES,
      }),
    );
    expect(textOf(message)).toBe("Saved.");
  });

  it("resumes a running turn's stream from its start, and answers 204 once it has ended", async () => {
    const chatId = uniqueId(`chat-resume-${store}`);
    const deltas = Array.from({ length: 8 }, (_, i) => `part ${i}. `);
    service.harness.enqueue(step.text(deltas, { chunkDelayMs: 150 }));
    const first = await post(chatId, [userMessage("t1", "Tell me a long story.")]);
    // Read until the answer is under way, then reconnect as a reloaded page with `resume: true` does.
    const reader = await readUntilText(first);
    const resumed = await transport().reconnectToStream({ chatId });
    if (resumed === null) throw new Error("the running turn was not resumed");
    const { message } = await read(resumed);
    expect(message.id).toBe("t1:a");
    expect(textOf(message)).toBe(deltas.join(""));
    await reader.cancel();
    expect(await transport().reconnectToStream({ chatId })).toBeNull();
    expect(await transport().reconnectToStream({ chatId: uniqueId("never-used") })).toBeNull();
  });

  it("resumes a turn running its second round with the first: the calls and the user's answers, then the text", async () => {
    const chatId = uniqueId(`chat-resume-tools-${store}`);
    service.harness.enqueue(
      step.functionCalls({ name: "read_file", arguments: { path: "a.ts" }, callId: "call_a" }),
    );
    const user = userMessage("t1", "Read a.ts slowly.");
    const paused = await send(chatId, [user]);
    const answered: UIMessage = {
      ...paused.message,
      parts: paused.message.parts.map((part) =>
        "toolCallId" in part ? { ...part, state: "output-available", output: "export {}" } : part,
      ) as UIMessage["parts"],
    };
    const deltas = Array.from({ length: 8 }, (_, i) => `line ${i}. `);
    service.harness.enqueue(step.text(deltas, { chunkDelayMs: 150 }));
    const second = await post(chatId, [user, answered], answered.id);
    const reader = await readUntilText(second);
    const resumed = await transport().reconnectToStream({ chatId });
    if (resumed === null) throw new Error("the running turn was not resumed");
    const { message } = await read(resumed);
    expect(message.parts).toContainEqual(
      expect.objectContaining({
        type: "tool-read_file",
        toolCallId: "call_a",
        state: "output-available",
        output: "export {}",
      }),
    );
    expect(textOf(message)).toBe(deltas.join(""));
    await reader.cancel();
  });

  it("stops a running turn: its stream ends with abort, and the turn is cancelled", async () => {
    const chatId = uniqueId(`chat-stop-${store}`);
    service.harness.enqueue(
      step.text(["Counting: ", ...Array.from({ length: 20 }, (_, i) => `${i} `)], { chunkDelayMs: 200 }),
    );
    const stream = await post(chatId, [userMessage("t1", "Count slowly.")]);
    const chunks: UIMessageChunk[] = [];
    const reader = stream.getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      chunks.push(chunk.value);
      if (chunk.value.type === "text-delta" && chunks.filter((c) => c.type === "text-delta").length === 1) {
        const stopped = await service.send("POST", `/v1/chat/${chatId}/stop`);
        expect(stopped.status).toBe(200);
        expect(stopped.body).toMatchObject({
          successful: true,
          result: { turnId: "t1", status: "cancelled" },
        });
      }
    }
    expect(chunks.at(-1)).toEqual({ type: "abort", reason: expect.any(String) });
    const session = expectOk(await service.session(chatId));
    expect(session.turns[0]?.status).toBe("cancelled");
    const nothing = await fetch(`${service.url}/v1/chat/${chatId}/stop`, {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEYS.alice}` },
    });
    expect(nothing.status).toBe(204);
  });

  it("answers a provider failure as an error part with its code and message, nothing internal", async () => {
    const chatId = uniqueId(`chat-fail-${store}`);
    service.harness.enqueue(
      step.error(500, {
        code: "server_down",
        type: "server_error",
        headers: { "x-request-id": "req_hidden_42" },
      }),
    );
    const stream = await post(chatId, [userMessage("t1", "Hello")]);
    const chunks: UIMessageChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const session = expectOk(await service.session(chatId));
    const error = session.turns[0]?.error;
    expect(chunks.slice(1)).toEqual([
      { type: "error", errorText: `PROVIDER_ERROR: ${error?.message}` },
      { type: "finish", finishReason: "error" },
    ]);
    // The service's own message; the provider's ids and codes stay in the turn's details and trace.
    expect(JSON.stringify(chunks)).not.toMatch(/req_hidden_42|server_down/);
  });

  it("refuses bad bodies with 400 naming the field", async () => {
    const postBody = async (body: unknown) => {
      const response = await fetch(`${service.url}/v1/chat`, {
        method: "POST",
        headers: { authorization: `Bearer ${API_KEYS.alice}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const answer = (await response.json()) as {
        errors: Array<{ code: string; details?: { fields?: unknown } }>;
      };
      return {
        status: response.status,
        code: answer.errors[0]?.code,
        fields: answer.errors[0]?.details?.fields,
      };
    };
    const chat = (extra: Record<string, unknown>) => ({
      id: uniqueId("chat-bad"),
      trigger: "submit-message",
      messages: [userMessage("t1", "Hi")],
      ...extra,
    });
    expect(await postBody(chat({ id: "not an id!" }))).toEqual({
      status: 400,
      code: "VALIDATION_FAILED",
      fields: [{ path: "id", message: expect.any(String) }],
    });
    expect(
      await postBody(
        chat({ messages: [userMessage("t1", "Hi"), { id: "t1:a", role: "assistant", parts: [] }] }),
      ),
    ).toEqual({
      status: 400,
      code: "VALIDATION_FAILED",
      fields: [{ path: "messages[1]", message: expect.any(String) }],
    });
    expect(await postBody(chat({ messages: [{ id: "x", role: "system", parts: [] }] }))).toMatchObject({
      status: 400,
      fields: [{ path: "messages[0]" }],
    });
    expect(await postBody(chat({ trigger: "resubmit" }))).toMatchObject({
      status: 400,
      fields: [{ path: "trigger" }],
    });
    expect(await postBody(chat({ instruction: "smuggled" }))).toMatchObject({
      status: 400,
      fields: [{ path: "instruction" }],
    });
  });

  async function messagesOf(chatId: string): Promise<UIMessage[]> {
    const response = await fetch(`${service.url}/v1/chat/${chatId}/messages`, {
      headers: { authorization: `Bearer ${API_KEYS.alice}` },
    });
    expect(response.status).toBe(200);
    const messages = (await response.json()) as UIMessage[];
    return validateUIMessages({ messages });
  }

  /** A turn paused on the model's call of `create_file`, which asks first. */
  async function askApproval(chatId: string) {
    service.harness.enqueue(
      step.functionCalls({ name: "create_file", arguments: NOTES, callId: "call_create" }),
    );
    const user = userMessage("t1", "Write my notes to a file.");
    const { message } = await send(chatId, [user]);
    expect(message.parts).toContainEqual(
      expect.objectContaining({
        type: "tool-create_file",
        toolCallId: "call_create",
        state: "approval-requested",
        input: NOTES,
        approval: { id: "call_create" },
      }),
    );
    return { user, asked: message };
  }
});

/** What addToolApprovalResponse leaves in the message. */
function respond(message: UIMessage, answer: { approved: boolean; reason?: string }): UIMessage {
  return {
    ...message,
    parts: message.parts.map((part) =>
      "approval" in part && part.state === "approval-requested"
        ? { ...part, state: "approval-responded", approval: { id: part.approval.id, ...answer } }
        : part,
    ) as UIMessage["parts"],
  };
}
