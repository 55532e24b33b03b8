import { fromJson, type ResponseVector } from "./vector.js";

const metadata = { sessionId: "sess_01HZX3", turnId: "turn-0001", modeDisplayName: "General" };

const final = (fields: Record<string, unknown> = {}) => ({
  kind: "final",
  ...metadata,
  primaryOutputText: "Done: `src/index.ts` exports `answer`.",
  ...fields,
});

const toolCall = (fields: Record<string, unknown> = {}) => ({
  toolCallId: "call_abc123",
  name: "read_file",
  argumentsJson: '{"relativePath":"src/index.ts"}',
  ...fields,
});

const continuation = (fields: Record<string, unknown> = {}) => ({
  kind: "client_tool_continuation",
  ...metadata,
  toolCalls: [toolCall()],
  ...fields,
});

const SHA = `sha256:${"0123456789abcdef".repeat(4)}`;

const file = (fields: Record<string, unknown> = {}) => ({
  name: "report.md",
  mimeType: "text/markdown",
  url: "/v1/files/file_9k2",
  sizeBytes: 2048,
  contentHash: SHA,
  ...fields,
});

const usage = { inputTokens: 1200, outputTokens: 300, totalTokens: 1500 };

/** Every bucket a client tool continuation must not carry, each with an empty or minimal value. */
const finalOnlyBuckets = {
  primaryOutputText: "",
  files: [],
  toolResults: [],
  userWarnings: [],
  usage,
};

export const responseVectors: readonly ResponseVector[] = [
  // ── valid ─────────────────────────────────────────────────────────────────────────────────────────────
  { name: "final: only the required fields", valid: true, input: final() },
  {
    name: "final: every allowed bucket",
    valid: true,
    input: final({
      files: [
        file({ description: "The generated report", contentExpires: "2026-01-01T00:00:00Z" }),
        file({
          name: "diagram.png",
          mimeType: "image/png",
          sizeBytes: 0,
          contentExpires: "2025-12-24T09:11:00.123-05:00",
        }),
      ],
      toolResults: [
        { toolCallId: "call_1", name: "search_code", executionMs: 41, resultJson: '{"hits":3}' },
        { toolCallId: "call_2", name: "run_query", executionMs: 0.5, errorMessage: "timeout after 30 s" },
      ],
      userWarnings: [
        { code: "CONTEXT_TRUNCATED", message: "Two artifacts were too large and were shortened." },
      ],
      usage: { ...usage, cachedInputTokens: 1024, reasoningTokens: 128, llmCalls: 3 },
    }),
  },
  {
    name: "final: empty primaryOutputText is still present",
    valid: true,
    input: final({ primaryOutputText: "" }),
  },
  { name: "client_tool_continuation: only the required fields", valid: true, input: continuation() },
  {
    name: "client_tool_continuation: several calls and a toolContinuationMessage",
    valid: true,
    input: continuation({
      toolCalls: [
        toolCall(),
        toolCall({ toolCallId: "toolu_01A", name: "list-dir", argumentsJson: "{}" }),
        toolCall({
          toolCallId: "call_3",
          name: "apply_patch",
          argumentsJson: '{"edits":[{"line":3}],"dryRun":false}',
        }),
      ],
      toolContinuationMessage: "Reading three files…",
    }),
  },

  // ── kind ──────────────────────────────────────────────────────────────────────────────────────────────
  {
    name: "kind: outside the closed set",
    valid: false,
    input: final({ kind: "partial" }),
    paths: ["kind"],
    jsonSchema: "rejects",
    messages: { kind: '"final", "client_tool_continuation"' },
  },
  {
    name: "kind: wrong case",
    valid: false,
    input: final({ kind: "Final" }),
    paths: ["kind"],
    jsonSchema: "rejects",
  },
  {
    name: "kind: missing",
    valid: false,
    input: { ...metadata, primaryOutputText: "hi" },
    paths: ["kind"],
    jsonSchema: "rejects",
  },
  {
    name: "the InvokeResult envelope instead of its result",
    valid: false,
    input: { successful: true, result: final(), errors: [], warnings: [] },
    paths: ["kind"],
    jsonSchema: "rejects",
  },

  // ── session metadata ──────────────────────────────────────────────────────────────────────────────────
  {
    name: "final: session metadata missing",
    valid: false,
    input: { kind: "final", primaryOutputText: "hi" },
    paths: ["sessionId", "turnId", "modeDisplayName"],
    jsonSchema: "rejects",
  },
  {
    name: "client_tool_continuation: empty modeDisplayName, bad turnId",
    valid: false,
    input: continuation({ modeDisplayName: "", turnId: "turn 1" }),
    paths: ["modeDisplayName", "turnId"],
    jsonSchema: "rejects",
  },
  {
    name: "final: primaryOutputText missing",
    valid: false,
    input: { kind: "final", ...metadata },
    paths: ["primaryOutputText"],
    jsonSchema: "rejects",
    messages: { primaryOutputText: "is required" },
  },

  // ── forbidden buckets ─────────────────────────────────────────────────────────────────────────────────
  {
    name: "final: toolCalls and toolContinuationMessage are forbidden",
    valid: false,
    input: final({ toolCalls: [toolCall()], toolContinuationMessage: "Reading…" }),
    paths: ["toolCalls", "toolContinuationMessage"],
    jsonSchema: "rejects",
    messages: { toolCalls: 'must be absent when kind is "final"' },
  },
  {
    name: "final: forbidden buckets even when empty",
    valid: false,
    input: final({ toolCalls: [], toolContinuationMessage: "" }),
    paths: ["toolCalls", "toolContinuationMessage"],
    jsonSchema: "rejects",
  },
  {
    name: "client_tool_continuation: every final-only bucket, empty or minimal",
    valid: false,
    input: continuation(finalOnlyBuckets),
    paths: ["primaryOutputText", "files", "toolResults", "userWarnings", "usage"],
    jsonSchema: "rejects",
    messages: { primaryOutputText: 'must be absent when kind is "client_tool_continuation"' },
  },
  ...(Object.keys(finalOnlyBuckets) as (keyof typeof finalOnlyBuckets)[]).map(
    (bucket): ResponseVector => ({
      name: `client_tool_continuation: ${bucket} alone`,
      valid: false,
      input: continuation({ [bucket]: finalOnlyBuckets[bucket] }),
      paths: [bucket],
      jsonSchema: "rejects",
    }),
  ),
  {
    name: "final: provider ids never leave the server",
    valid: false,
    input: final({ previousResponseId: "resp_123", mode: "general" }),
    paths: ["previousResponseId", "mode"],
    jsonSchema: "rejects",
    messages: { previousResponseId: "is not a field of AgentExecuteResponse" },
  },
  {
    name: "final: PascalCase field names are unknown",
    valid: false,
    input: {
      kind: "final",
      SessionId: "s1",
      turnId: "t1",
      modeDisplayName: "General",
      primaryOutputText: "hi",
    },
    paths: ["sessionId", "SessionId"],
    jsonSchema: "rejects",
  },

  // ── allowed buckets must be absent rather than empty ──────────────────────────────────────────────────
  {
    name: "final: empty files, toolResults and userWarnings",
    valid: false,
    input: final({ files: [], toolResults: [], userWarnings: [] }),
    paths: ["files", "toolResults", "userWarnings"],
    jsonSchema: "rejects",
    messages: { files: "must be absent rather than empty" },
  },
  {
    name: "client_tool_continuation: empty toolCalls",
    valid: false,
    input: continuation({ toolCalls: [] }),
    paths: ["toolCalls"],
    jsonSchema: "rejects",
    messages: { toolCalls: "at least one tool call" },
  },
  {
    name: "client_tool_continuation: toolCalls missing",
    valid: false,
    input: { kind: "client_tool_continuation", ...metadata },
    paths: ["toolCalls"],
    jsonSchema: "rejects",
  },

  // ── tool calls ────────────────────────────────────────────────────────────────────────────────────────
  {
    name: "tool call: a toolCallId repeating an earlier call's (AGN-033 §3.3: an exact, ordered set)",
    valid: false,
    input: continuation({
      toolCalls: [
        toolCall(),
        toolCall({ toolCallId: "call_2", name: "list-dir", argumentsJson: "{}" }),
        toolCall({ argumentsJson: '{"relativePath":"README.md"}' }),
      ],
    }),
    paths: ["toolCalls[2].toolCallId"],
    jsonSchema: "zod-only",
    messages: { "toolCalls[2].toolCallId": "must be unique: toolCalls[0] has the same toolCallId" },
  },
  {
    name: "tool call: argumentsJson is JSON but not an object",
    valid: false,
    input: continuation({
      toolCalls: [
        toolCall({ argumentsJson: "[]" }),
        toolCall({ toolCallId: "c2", argumentsJson: "null" }),
        toolCall({ toolCallId: "c3", argumentsJson: '"{}"' }),
      ],
    }),
    paths: [0, 1, 2].map((index) => `toolCalls[${index}].argumentsJson`),
    jsonSchema: "zod-only",
    messages: { "toolCalls[0].argumentsJson": "JSON text of an object" },
  },
  {
    name: "tool call: argumentsJson is not JSON",
    valid: false,
    input: continuation({ toolCalls: [toolCall({ argumentsJson: "{relativePath: src/index.ts}" })] }),
    paths: ["toolCalls[0].argumentsJson"],
    jsonSchema: "zod-only",
  },
  {
    name: "tool call: argumentsJson an object instead of JSON text",
    valid: false,
    input: continuation({ toolCalls: [toolCall({ argumentsJson: { relativePath: "src/index.ts" } })] }),
    paths: ["toolCalls[0].argumentsJson"],
    jsonSchema: "rejects",
    messages: { "toolCalls[0].argumentsJson": "must be a string, not an object" },
  },
  {
    name: "tool call: name with a dot, empty toolCallId, unknown field",
    valid: false,
    input: continuation({ toolCalls: [toolCall({ name: "fs.read", toolCallId: "", arguments: {} })] }),
    paths: ["toolCalls[0].name", "toolCalls[0].toolCallId", "toolCalls[0].arguments"],
    jsonSchema: "rejects",
  },

  // ── files ─────────────────────────────────────────────────────────────────────────────────────────────
  {
    name: "FileRef: contentHash with uppercase hex, another algorithm, 63 digits, no prefix",
    valid: false,
    input: final({
      files: [
        file({ contentHash: SHA.toUpperCase().replace("SHA256", "sha256") }),
        file({ contentHash: `md5:${"0".repeat(32)}` }),
        file({ contentHash: SHA.slice(0, -1) }),
        file({ contentHash: "0".repeat(64) }),
      ],
    }),
    paths: [0, 1, 2, 3].map((index) => `files[${index}].contentHash`),
    jsonSchema: "rejects",
    messages: { "files[0].contentHash": "64 lowercase hex digits" },
  },
  {
    name: "FileRef: negative or fractional sizeBytes, empty url",
    valid: false,
    input: final({ files: [file({ sizeBytes: -1 }), file({ sizeBytes: 1.5, url: "" })] }),
    paths: ["files[0].sizeBytes", "files[1].sizeBytes", "files[1].url"],
    jsonSchema: "rejects",
    messages: { "files[0].sizeBytes": "must be at least 0", "files[1].sizeBytes": "must be an integer" },
  },
  {
    name: "FileRef: contentExpires not ISO-8601 or without an offset",
    valid: false,
    input: final({
      files: [file({ contentExpires: "tomorrow" }), file({ contentExpires: "2026-01-01T00:00:00" })],
    }),
    paths: ["files[0].contentExpires", "files[1].contentExpires"],
    jsonSchema: "rejects",
  },
  {
    name: "FileRef: required fields missing, embedded contents",
    valid: false,
    input: final({ files: [{ name: "report.md", contentsBase64: "SGk=" }] }),
    paths: [
      "files[0].mimeType",
      "files[0].url",
      "files[0].sizeBytes",
      "files[0].contentHash",
      "files[0].contentsBase64",
    ],
    jsonSchema: "rejects",
  },

  // ── usage, executed tool results, warnings ───────────────────────────────────────────────────────────
  {
    name: "usage: negative, fractional, zero llmCalls",
    valid: false,
    input: final({ usage: { inputTokens: -1, outputTokens: 2.5, totalTokens: 3, llmCalls: 0 } }),
    paths: ["usage.inputTokens", "usage.outputTokens", "usage.llmCalls"],
    jsonSchema: "rejects",
    messages: { "usage.inputTokens": "must be at least 0", "usage.llmCalls": "must be at least 1" },
  },
  {
    name: "usage: beyond the safe integer range, totalTokens missing",
    valid: false,
    input: final({ usage: { inputTokens: 2 ** 60, outputTokens: 1 } }),
    paths: ["usage.inputTokens", "usage.totalTokens"],
    jsonSchema: "rejects",
    messages: { "usage.inputTokens": "must be at most 9007199254740991" },
  },
  {
    name: "executed tool result: both outcomes, neither outcome, missing name",
    valid: false,
    input: final({
      toolResults: [
        { toolCallId: "c1", name: "search", executionMs: 1, resultJson: "{}", errorMessage: "x" },
        { toolCallId: "c2", name: "search", executionMs: 1 },
        { toolCallId: "c3", executionMs: 1, resultJson: "{}" },
      ],
    }),
    paths: ["toolResults[0]", "toolResults[1]", "toolResults[2].name"],
    jsonSchema: "rejects",
  },
  {
    name: "executed tool result: executionMs 1e400, which JSON parses to Infinity",
    valid: false,
    ...fromJson(`{
      "kind": "final",
      "sessionId": "s1",
      "turnId": "t1",
      "modeDisplayName": "General",
      "primaryOutputText": "Done.",
      "toolResults": [{ "toolCallId": "c1", "name": "search", "executionMs": 1e400, "resultJson": "{}" }]
    }`),
    paths: ["toolResults[0].executionMs"],
    jsonSchema: "rejects",
    messages: { "toolResults[0].executionMs": "must be a number, not a non-finite number (Infinity)" },
  },
  {
    name: "executed tool result: resultJson not JSON text",
    valid: false,
    input: final({
      toolResults: [{ toolCallId: "c1", name: "search", executionMs: 1, resultJson: "hits: 3" }],
    }),
    paths: ["toolResults[0].resultJson"],
    jsonSchema: "zod-only",
  },
  {
    name: "user warning: lowercase code, empty message",
    valid: false,
    input: final({ userWarnings: [{ code: "context_truncated", message: "" }] }),
    paths: ["userWarnings[0].code", "userWarnings[0].message"],
    jsonSchema: "rejects",
  },

  // ── not an object ─────────────────────────────────────────────────────────────────────────────────────
  ...(
    [
      ["null", null, "must be a JSON object, not null"],
      ["an array", [final()], "must be a JSON object, not an array"],
      ["a string", "final", "must be a JSON object, not a string"],
    ] as const
  ).map(
    ([label, input, message]): ResponseVector => ({
      name: `not an object: ${label}`,
      valid: false,
      input,
      paths: [""],
      jsonSchema: "rejects",
      messages: { "": message },
    }),
  ),
];
