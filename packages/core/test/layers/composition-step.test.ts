import { createHash, createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ConversationContext } from "../../src/catalog/conversation-context.js";
import type { Mode } from "../../src/catalog/mode.js";
import { ModeCatalog } from "../../src/catalog/mode-catalog.js";
import {
  type CompositionInput,
  CompositionStep,
  needsReplay,
} from "../../src/composition/composition-step.js";
import {
  type ConversationCursor,
  EMPTY_CURSOR,
  type LlmRequest,
  type ToolDefinition,
  type TranscriptItem,
} from "../../src/index.js";

const context: ConversationContext = {
  id: "ctx",
  bootPrompt: "You are Aptix.",
  model: "gpt-test",
  provider: "scripted",
};
const general: Mode = {
  id: "general",
  displayName: "General",
  instructions: "Help with anything.",
  tools: ["read_file"],
  toolChoice: null,
};
const review: Mode = {
  id: "review",
  displayName: "Code Review",
  instructions: "Review the code.",
  tools: ["submit_review"],
  toolChoice: "submit_review",
};
const quiet: Mode = { ...general, id: "quiet", instructions: "" };
const tools: ToolDefinition[] = [
  { name: "read_file", description: "Read a file.", parameters: { type: "object" } },
  { name: "agent_change_mode", description: "Change mode.", parameters: { type: "object" }, strict: true },
];
const userMessage: TranscriptItem = {
  type: "user_message",
  content: [{ type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nHi" }],
};
const toolOutput: TranscriptItem = {
  type: "function_call_output",
  callId: "c1",
  output: '{"ok":true}',
  isError: false,
};

const alice = { principal: "alice", sessionId: "s1" };

const SECRET = new TextEncoder().encode("deployment secret");

async function compose(overrides: Partial<CompositionInput> = {}, secret = SECRET): Promise<LlmRequest> {
  const modes = new ModeCatalog([general, review, quiet]);
  const result = await new CompositionStep({ toolsFor: () => tools, modes }, secret).run({
    context,
    session: alice,
    mode: general,
    currentModeId: overrides.mode?.id ?? "general",
    cursor: EMPTY_CURSOR,
    newItems: [userMessage],
    firstCallOfTurn: true,
    ...overrides,
  });
  if (!result.successful) throw new Error(result.errors[0].message);
  return result.result;
}

const continued: ConversationCursor = { responseId: "resp_7", pendingInput: [], transcriptLength: 5 };

describe("CompositionStep (layer 1)", () => {
  it("opens a fresh session with the boot prompt and the mode's instructions as one system message", async () => {
    const request = await compose();
    expect(request).toEqual({
      model: "gpt-test",
      continuation: { type: "none" },
      input: [{ type: "system_message", text: "You are Aptix.\n\nHelp with anything." }, userMessage],
      tools,
      toolChoice: { type: "auto" },
      cacheKey: expect.any(String),
    });
    expect("maxOutputTokens" in request).toBe(false);
  });

  it("gives every call of a session one cache key, another for another session or principal, naming neither", async () => {
    const { cacheKey } = await compose();
    expect(
      (await compose({ cursor: continued, firstCallOfTurn: false, newItems: [toolOutput] })).cacheKey,
    ).toBe(cacheKey);
    const others = [
      await compose({ session: { principal: "alice", sessionId: "s2" } }),
      await compose({ session: { principal: "bob", sessionId: "s1" } }),
      // Joined naively, these two would name one session.
      await compose({ session: { principal: "alice:s", sessionId: "1" } }),
    ].map((request) => request.cacheKey);
    expect(new Set([cacheKey, ...others]).size).toBe(4);
    for (const key of [cacheKey, ...others]) {
      expect(key).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
      expect(key).not.toContain("alice");
    }
  });

  it("keys the cache key by the deployment's secret: the same under one secret, another under another, no plain hash", async () => {
    const { cacheKey } = await compose();
    expect((await compose()).cacheKey).toBe(cacheKey);
    const otherSecret = new TextEncoder().encode("another deployment");
    expect((await compose({}, otherSecret)).cacheKey).not.toBe(cacheKey);
    expect(cacheKey).toBe(
      createHmac("sha256", SECRET)
        .update(JSON.stringify(["aptix-session", "alice", "s1"]))
        .digest("base64url"),
    );
    // Anyone can compute a plain hash of guessable ids; none of these is the key.
    const plain = [
      JSON.stringify(["aptix-session", "alice", "s1"]),
      JSON.stringify(["alice", "s1"]),
      "alice:s1",
      "alice/s1",
    ].flatMap((text) => [
      createHash("sha256").update(text).digest("base64url"),
      createHash("sha256").update(text).digest("hex"),
    ]);
    expect(plain).not.toContain(cacheKey);
  });

  it("sends the boot prompt alone when the mode has no instructions", async () => {
    const request = await compose({ mode: quiet });
    expect(request.input[0]).toEqual({ type: "system_message", text: "You are Aptix." });
  });

  it("sends no system message once the provider has seen the session", async () => {
    const request = await compose({ cursor: continued, firstCallOfTurn: false, newItems: [toolOutput] });
    expect(request.input).toEqual([toolOutput]);
    expect(request.continuation).toEqual({ type: "previous_response", responseId: "resp_7" });
  });

  it("treats a cursor with pending input as not fresh, and sends the pending input before the new items", async () => {
    const pending: TranscriptItem[] = [
      { type: "system_message", text: "You are Aptix.\n\nHelp with anything." },
      { type: "user_message", content: [{ type: "text", text: "earlier" }] },
    ];
    const request = await compose({
      cursor: { responseId: null, pendingInput: pending, transcriptLength: 0 },
    });
    expect(request.continuation).toEqual({ type: "none" });
    expect(request.input).toEqual([...pending, userMessage]);
  });

  it("puts pending input after the previous response and before the new items", async () => {
    const pending: TranscriptItem[] = [
      { type: "user_message", content: [{ type: "text", text: "unanswered turn" }] },
    ];
    const request = await compose({ cursor: { ...continued, pendingInput: pending } });
    expect(request.continuation).toEqual({ type: "previous_response", responseId: "resp_7" });
    expect(request.input).toEqual([...pending, userMessage]);
  });

  it("replays the given transcript instead of continuing from the stored response", async () => {
    const replay: TranscriptItem[] = [
      { type: "system_message", text: "You are Aptix.\n\nHelp with anything." },
      userMessage,
      { type: "assistant_message", text: "Hello." },
    ];
    const request = await compose({
      cursor: { responseId: null, pendingInput: [], transcriptLength: 3 },
      replay,
    });
    expect(request.continuation).toEqual({ type: "replay", items: replay });
    expect(request.input).toEqual([userMessage]);

    const lost = await compose({ cursor: continued, replay });
    expect(lost.continuation).toEqual({ type: "replay", items: replay });
  });

  it("writes every system message it sends, replayed or pending, with the current mode's instructions", async () => {
    const first: TranscriptItem = { type: "system_message", text: "You are Aptix.\n\nHelp with anything." };
    const current: TranscriptItem = { type: "system_message", text: "You are Aptix.\n\nReview the code." };
    const replayed = await compose({
      currentModeId: "review",
      cursor: { responseId: null, pendingInput: [], transcriptLength: 2 },
      replay: [first, userMessage],
    });
    expect(replayed.continuation).toEqual({ type: "replay", items: [current, userMessage] });
    const pending = await compose({
      currentModeId: "review",
      cursor: { responseId: null, pendingInput: [first, userMessage], transcriptLength: 0 },
    });
    expect(pending.input).toEqual([current, userMessage, userMessage]);
    // The turn's mode still picks the tools and the forced choice.
    expect(pending.toolChoice).toEqual({ type: "auto" });
  });

  it("forces the mode's tool on the first call of a turn only", async () => {
    expect((await compose({ mode: review })).toolChoice).toEqual({ type: "tool", name: "submit_review" });
    expect((await compose({ mode: review, firstCallOfTurn: false, cursor: continued })).toolChoice).toEqual({
      type: "auto",
    });
    expect((await compose({ mode: general, firstCallOfTurn: true })).toolChoice).toEqual({ type: "auto" });
  });

  it("passes the tools through unchanged on every call", async () => {
    const first = await compose();
    const later = await compose({ cursor: continued, firstCallOfTurn: false, newItems: [toolOutput] });
    expect(first.tools).toBe(tools);
    expect(later.tools).toBe(tools);
  });

  it("passes the context's maxOutputTokens through", async () => {
    const request = await compose({ context: { ...context, maxOutputTokens: 2048 } });
    expect(request.maxOutputTokens).toBe(2048);
  });
});

describe("needsReplay", () => {
  it("replays only when the provider has seen something and cannot continue from a stored response", () => {
    expect(needsReplay(EMPTY_CURSOR, false, false)).toBe(false);
    expect(needsReplay(EMPTY_CURSOR, true, true)).toBe(false);
    expect(needsReplay(continued, true, false)).toBe(false);
    expect(needsReplay(continued, true, true)).toBe(true);
    expect(needsReplay(continued, false, false)).toBe(true);
    expect(needsReplay({ ...continued, responseId: null }, true, false)).toBe(true);
  });
});
