import { fromJson, type RequestVector } from "./vector.js";

/** A 1×1 transparent PNG, base64: a real image, small enough to read. */
const PNG_1X1 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

const ids = { sessionId: "sess_01HZX3", turnId: "turn-0001" };

/** Drops keys set to `undefined`, so an override can remove a default and every vector stays a JSON document. */
const compact = (object: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined));

const artifact = (overrides: Record<string, unknown> = {}) =>
  compact({
    relativePath: "src/index.ts",
    fileName: "index.ts",
    contents: "export const answer = 42;\n",
    origin: "ide",
    ...overrides,
  });

const image = (overrides: Record<string, unknown> = {}) =>
  compact({ id: "img-1", mimeType: "image/png", dataBase64: PNG_1X1, ...overrides });

const result = (overrides: Record<string, unknown> = {}) =>
  compact({ toolCallId: "call_abc123", executionMs: 12, resultJson: '{"lines":["a","b"]}', ...overrides });

/** A user turn with an instruction plus `fields`. */
const turn = (fields: Record<string, unknown> = {}) => ({
  ...ids,
  instruction: "Explain this file.",
  ...fields,
});

/** A user turn whose only input is the given artifacts. */
const withArtifacts = (...artifacts: unknown[]) => ({ ...ids, inputArtifacts: artifacts });

/** A user turn whose only input is the given images. */
const withImages = (...images: unknown[]) => ({ ...ids, clipboardImages: images });

/** A tool continuation carrying `toolResults` plus `fields`. */
const continuation = (toolResults: unknown[], fields: Record<string, unknown> = {}) => ({
  ...ids,
  toolResults,
  ...fields,
});

const path0 = (field: string) => `inputArtifacts[0].${field}`;

export const requestVectors: readonly RequestVector[] = [
  // ── valid user turns ──────────────────────────────────────────────────────────────────────────────────
  { name: "user turn: only an instruction", valid: true, input: turn() },
  { name: "user turn: only an input artifact", valid: true, input: withArtifacts(artifact()) },
  { name: "user turn: only a clipboard image", valid: true, input: withImages(image()) },
  {
    name: "user turn: every optional field, every image type and rag operator",
    valid: true,
    input: turn({
      inputArtifacts: [
        artifact({ mimeType: "text/x-typescript", language: "typescript", encoding: "utf8" }),
        artifact({
          relativePath: "assets/logo.png",
          fileName: "logo.png",
          contents: PNG_1X1,
          origin: "user",
          mimeType: "image/png",
          encoding: "base64",
        }),
      ],
      clipboardImages: [
        image({ id: "img-1", mimeType: "image/png" }),
        image({ id: "img-2", mimeType: "image/jpeg" }),
        image({ id: "img-3", mimeType: "image/gif" }),
        image({ id: "img-4", mimeType: "image/webp" }),
      ],
      ragScope: [
        { key: "project", operator: "==", values: ["Aptix.Core"] },
        { key: "layer", operator: "!=", values: ["tests", "samples"] },
        { key: "path", operator: "contains", values: ["src/"] },
        { key: "path", operator: "does_not_contain", values: ["generated"] },
      ],
      solutionContextText: "agent.aptix present; .NET 8 solution with 4 projects",
      workspaceId: "ws-7f3a",
      repo: "aptix/agent-service",
      language: "csharp",
      stream: false,
      agentContextId: "agent.default",
      conversationContextId: "conv:2025-12-24",
    }),
  },
  {
    name: 'user turn: solutionContextText "" clears the session\'s stored context',
    valid: true,
    input: turn({ solutionContextText: "" }),
  },
  {
    name: "ids: 128 characters using every allowed punctuation mark",
    valid: true,
    input: turn({ sessionId: `a.b_c:d-${"x".repeat(120)}`, turnId: "T.0_1:2-3" }),
  },
  {
    name: "artifact paths: dot files, '..' inside a name, unicode, spaces",
    valid: true,
    input: withArtifacts(
      artifact({ relativePath: ".github/workflows/ci.yml", fileName: "ci.yml" }),
      artifact({ relativePath: "docs/a..b/notes...md", fileName: "notes...md" }),
      artifact({ relativePath: "docs/日本語/read me.md", fileName: "read me.md" }),
    ),
  },
  {
    name: "artifact paths: dots and spaces are ordinary where Windows keeps them (not ending a segment)",
    valid: true,
    input: withArtifacts(
      artifact({ relativePath: ".env", fileName: ".env" }),
      artifact({ relativePath: "config/a.b.c", fileName: "a.b.c" }),
      artifact({ relativePath: "..hidden/...x", fileName: "...x" }),
      artifact({ relativePath: "docs/ notes/.a.b", fileName: ".a.b" }),
    ),
  },
  {
    name: "artifact: empty contents, utf8 and base64",
    valid: true,
    input: withArtifacts(artifact({ contents: "" }), artifact({ contents: "", encoding: "base64" })),
  },
  {
    name: "artifact: MIME types are case-insensitive",
    valid: true,
    input: withArtifacts(
      artifact({ mimeType: "Text/Markdown" }),
      artifact({ mimeType: "application/vnd.api+json" }),
    ),
  },
  {
    name: "artifact fileName: 255 emoji (510 UTF-16 units) fit, as limits count characters, not UTF-16 units",
    valid: true,
    input: withArtifacts(artifact({ fileName: "📄".repeat(255) })),
  },
  {
    name: "user turn: instruction with emoji and non-Latin text",
    valid: true,
    input: turn({ instruction: "Résume ce fichier 📄, 请简要说明。" }),
  },
  {
    name: "limits: instruction exactly at maxInstructionChars",
    valid: true,
    limits: { maxInstructionChars: 10 },
    input: turn({ instruction: "0123456789" }),
  },
  {
    name: "limits: utf8 artifact exactly at maxArtifactBytes in UTF-8 bytes",
    valid: true,
    limits: { maxArtifactBytes: 8 },
    input: withArtifacts(artifact({ contents: "éééé" })),
  },
  {
    name: "limits: base64 artifact decoding to exactly maxArtifactBytes",
    valid: true,
    limits: { maxArtifactBytes: 6 },
    input: withArtifacts(artifact({ contents: "AAECAwQF", encoding: "base64" })),
  },
  {
    name: "limits: base64 sizes count whole 3-byte groups (6 decoded bytes pass a 4-byte limit)",
    valid: true,
    limits: { maxArtifactBytes: 4 },
    input: withArtifacts(artifact({ contents: "AAECAwQF", encoding: "base64" })),
  },
  {
    name: "limits: artifacts exactly at maxArtifactTotalBytes together",
    valid: true,
    limits: { maxArtifactTotalBytes: 12 },
    input: withArtifacts(
      artifact({ contents: "abcdef" }),
      artifact({ contents: "AAECAwQF", encoding: "base64" }),
    ),
  },

  // ── valid tool continuations ──────────────────────────────────────────────────────────────────────────
  { name: "tool continuation: one resultJson", valid: true, input: continuation([result()]) },
  {
    name: "tool continuation: errorMessage, executionMs 0, any JSON value as resultJson",
    valid: true,
    input: continuation([
      result({ toolCallId: "toolu_01", resultJson: undefined, errorMessage: "ENOENT: no such file" }),
      result({ toolCallId: "call_2", executionMs: 0, resultJson: "null" }),
      result({ toolCallId: "call_3", executionMs: 1.5, resultJson: '"plain text"' }),
      result({ toolCallId: "call_4", resultJson: " [1, 2, 3] " }),
      result({ toolCallId: `call_${"z".repeat(251)}`, resultJson: "42" }),
    ]),
  },
  {
    name: "tool continuation: resultJson escapes of NUL and of a lone surrogate are text, and storable",
    valid: true,
    input: continuation([result({ resultJson: '{"nul":"\\u0000","half":"\\ud83d"}' })]),
  },

  // ── sessionId / turnId ────────────────────────────────────────────────────────────────────────────────
  {
    name: "sessionId missing",
    valid: false,
    input: { turnId: "t1", instruction: "hi" },
    paths: ["sessionId"],
    jsonSchema: "rejects",
    messages: { sessionId: "is required" },
  },
  {
    name: "turnId missing in a tool continuation",
    valid: false,
    input: { sessionId: "s1", toolResults: [result()] },
    paths: ["turnId"],
    jsonSchema: "rejects",
  },
  {
    name: "sessionId and turnId missing and no input: the missing ids hide the input rule",
    valid: false,
    input: {},
    paths: ["sessionId", "turnId"],
    jsonSchema: "rejects",
  },
  {
    name: "sessionId empty",
    valid: false,
    input: turn({ sessionId: "" }),
    paths: ["sessionId"],
    jsonSchema: "rejects",
  },
  {
    name: "sessionId and turnId with characters outside [A-Za-z0-9._:-]",
    valid: false,
    input: turn({ sessionId: "sess/1", turnId: "turn 1" }),
    paths: ["sessionId", "turnId"],
    jsonSchema: "rejects",
  },
  {
    name: "turnId of 129 characters",
    valid: false,
    input: turn({ turnId: "t".repeat(129) }),
    paths: ["turnId"],
    jsonSchema: "rejects",
  },
  {
    name: "sessionId a number, turnId null",
    valid: false,
    input: turn({ sessionId: 42, turnId: null }),
    paths: ["sessionId", "turnId"],
    jsonSchema: "rejects",
    messages: { sessionId: "must be a string, not a number", turnId: "must be a string, not null" },
  },

  // ── at least one input ────────────────────────────────────────────────────────────────────────────────
  {
    name: "user turn without any input",
    valid: false,
    input: { ...ids },
    paths: [""],
    jsonSchema: "rejects",
    messages: { "": "at least one of instruction, inputArtifacts or clipboardImages" },
  },
  {
    name: "user turn whose only inputs are empty arrays",
    valid: false,
    input: { ...ids, inputArtifacts: [], clipboardImages: [] },
    paths: [""],
    jsonSchema: "rejects",
  },
  {
    name: "user turn with hints but no input",
    valid: false,
    input: {
      ...ids,
      ragScope: [{ key: "k", operator: "==", values: ["v"] }],
      solutionContextText: "x",
      stream: true,
    },
    paths: [""],
    jsonSchema: "rejects",
  },
  {
    name: "instruction of whitespace only",
    valid: false,
    input: turn({ instruction: " \t\n " }),
    paths: ["instruction"],
    jsonSchema: "rejects",
    messages: { instruction: "non-whitespace" },
  },
  {
    name: "instruction empty",
    valid: false,
    input: turn({ instruction: "" }),
    paths: ["instruction"],
    jsonSchema: "rejects",
  },
  {
    name: "limits: instruction over maxInstructionChars",
    valid: false,
    limits: { maxInstructionChars: 10 },
    input: turn({ instruction: "0123456789A" }),
    paths: ["instruction"],
    jsonSchema: "rejects",
  },

  // ── forbidden and unknown fields ──────────────────────────────────────────────────────────────────────
  {
    name: "user turn: mode, previousResponseId and toolsJson are server-owned",
    valid: false,
    input: turn({ mode: "general", previousResponseId: "resp_123", toolsJson: "[]" }),
    paths: ["mode", "previousResponseId", "toolsJson"],
    jsonSchema: "rejects",
    messages: { mode: "server-owned", previousResponseId: "server-owned", toolsJson: "server-owned" },
  },
  {
    name: "user turn: more server-owned names from older DDRs",
    valid: false,
    input: turn({
      modeId: "m",
      conversationId: "c",
      toolChoice: "auto",
      model: "gpt-5.1",
      provider: "openai",
    }),
    paths: ["modeId", "conversationId", "toolChoice", "model", "provider"],
    jsonSchema: "rejects",
  },
  {
    name: "user turn: PascalCase SessionId gets a camelCase hint",
    valid: false,
    input: { SessionId: "s1", turnId: "t1", instruction: "hi" },
    paths: ["sessionId", "SessionId"],
    jsonSchema: "rejects",
    messages: { sessionId: "is required", SessionId: "camelCase: 'sessionId'" },
  },
  {
    name: "user turn: PascalCase Instruction is unknown, so the turn has no input",
    valid: false,
    input: { ...ids, Instruction: "hi" },
    paths: ["Instruction", ""],
    jsonSchema: "rejects",
    messages: { Instruction: "'instruction'" },
  },
  {
    name: "user turn: unknown top-level field",
    valid: false,
    input: turn({ temperature: 0.2 }),
    paths: ["temperature"],
    jsonSchema: "rejects",
    messages: { temperature: "is not a field of AgentExecuteRequest" },
  },
  {
    name: "artifact: unknown nested field",
    valid: false,
    input: withArtifacts(artifact({ path: "src/index.ts" })),
    paths: [path0("path")],
    jsonSchema: "rejects",
    messages: { [path0("path")]: "is not a known field here" },
  },
  {
    name: "mixed scenario: toolResults plus an instruction",
    valid: false,
    input: continuation([result()], { instruction: "and also do this" }),
    paths: ["instruction"],
    jsonSchema: "rejects",
    messages: { instruction: "not allowed in a tool continuation" },
  },
  {
    name: "tool continuation: user-turn inputs, context and streaming are forbidden",
    valid: false,
    input: continuation([result()], {
      inputArtifacts: [artifact()],
      clipboardImages: [image()],
      solutionContextText: "x",
      ragScope: [],
      stream: true,
    }),
    paths: ["inputArtifacts", "clipboardImages", "solutionContextText", "ragScope", "stream"],
    jsonSchema: "rejects",
  },
  {
    name: "tool continuation: mode and previousResponseId are server-owned",
    valid: false,
    input: continuation([result()], { mode: "general", previousResponseId: "resp_1" }),
    paths: ["mode", "previousResponseId"],
    jsonSchema: "rejects",
    messages: { mode: "server-owned" },
  },
  {
    name: "tool continuation: PascalCase TurnId gets a camelCase hint",
    valid: false,
    input: { sessionId: "s1", TurnId: "t1", toolResults: [result()] },
    paths: ["turnId", "TurnId"],
    jsonSchema: "rejects",
    messages: { TurnId: "'turnId'" },
  },
  {
    name: "tool continuation: unknown field",
    valid: false,
    input: continuation([result()], { status: "done" }),
    paths: ["status"],
    jsonSchema: "rejects",
  },

  // ── input artifacts ───────────────────────────────────────────────────────────────────────────────────
  {
    name: "artifact path: leading '/'",
    valid: false,
    input: withArtifacts(artifact({ relativePath: "/etc/passwd" })),
    paths: [path0("relativePath")],
    jsonSchema: "rejects",
    messages: { [path0("relativePath")]: "not start with '/'" },
  },
  {
    name: "artifact path: drive letter",
    valid: false,
    input: withArtifacts(
      artifact({ relativePath: "C:/Users/dev/secret.txt" }),
      artifact({ relativePath: "c:notes.txt" }),
    ),
    paths: [path0("relativePath"), "inputArtifacts[1].relativePath"],
    jsonSchema: "rejects",
    messages: { [path0("relativePath")]: "drive letter" },
  },
  {
    name: "artifact path: '..' segment at the start, in the middle, at the end",
    valid: false,
    input: withArtifacts(
      artifact({ relativePath: "../outside.txt" }),
      artifact({ relativePath: "src/../../etc/passwd" }),
      artifact({ relativePath: "src/.." }),
      artifact({ relativePath: ".." }),
    ),
    paths: [0, 1, 2, 3].map((index) => `inputArtifacts[${index}].relativePath`),
    jsonSchema: "rejects",
    messages: { [path0("relativePath")]: "'..' segment" },
  },
  {
    name: "artifact path: backslash separators",
    valid: false,
    input: withArtifacts(artifact({ relativePath: "src\\index.ts" })),
    paths: [path0("relativePath")],
    jsonSchema: "rejects",
    messages: { [path0("relativePath")]: "'/' as its separator" },
  },
  {
    name: "artifact path: empty segment '//' and trailing '/'",
    valid: false,
    input: withArtifacts(artifact({ relativePath: "src//index.ts" }), artifact({ relativePath: "src/" })),
    paths: [path0("relativePath"), "inputArtifacts[1].relativePath"],
    jsonSchema: "rejects",
  },
  {
    name: "artifact path: '.' segment at the start, in the middle, at the end, alone",
    valid: false,
    input: withArtifacts(
      artifact({ relativePath: "./src/index.ts" }),
      artifact({ relativePath: "src/./index.ts" }),
      artifact({ relativePath: "src/." }),
      artifact({ relativePath: "." }),
    ),
    paths: [0, 1, 2, 3].map((index) => `inputArtifacts[${index}].relativePath`),
    jsonSchema: "rejects",
    messages: { [path0("relativePath")]: "must not contain a '.' segment" },
  },
  {
    name: "artifact path: segments made only of dots and spaces, which Windows can trim to '..'",
    valid: false,
    input: withArtifacts(
      artifact({ relativePath: ".. /outside.txt" }),
      artifact({ relativePath: "src/.. " }),
      artifact({ relativePath: ".../outside.txt" }),
      artifact({ relativePath: "src/ /index.ts" }),
      artifact({ relativePath: ". ./index.ts" }),
    ),
    paths: [0, 1, 2, 3, 4].map((index) => `inputArtifacts[${index}].relativePath`),
    jsonSchema: "rejects",
    messages: {
      [path0("relativePath")]: "only of dots and spaces",
      "inputArtifacts[3].relativePath": "only of dots and spaces",
    },
  },
  {
    name: "artifact path: a segment ending with '.' or a space, which Windows drops",
    valid: false,
    input: withArtifacts(
      artifact({ relativePath: "notes." }),
      artifact({ relativePath: "src./index.ts" }),
      artifact({ relativePath: "src/index.ts " }),
      artifact({ relativePath: "src. /index.ts" }),
    ),
    paths: [0, 1, 2, 3].map((index) => `inputArtifacts[${index}].relativePath`),
    jsonSchema: "rejects",
    messages: { [path0("relativePath")]: "ending with '.' or a space" },
  },
  {
    name: "artifact path: control characters (NUL, newline, DEL)",
    valid: false,
    input: withArtifacts(
      artifact({ relativePath: "src/a\u0000.ts" }),
      artifact({ relativePath: "src/a\n.ts" }),
      artifact({ relativePath: "src/a\u007f.ts" }),
    ),
    paths: [0, 1, 2].map((index) => `inputArtifacts[${index}].relativePath`),
    jsonSchema: "rejects",
  },
  {
    name: "artifact path: empty",
    valid: false,
    input: withArtifacts(artifact({ relativePath: "" })),
    paths: [path0("relativePath")],
    jsonSchema: "rejects",
  },
  {
    name: "artifact fileName: contains a slash, a backslash, or nothing",
    valid: false,
    input: withArtifacts(
      artifact({ fileName: "src/index.ts" }),
      artifact({ fileName: "src\\index.ts" }),
      artifact({ fileName: "" }),
    ),
    paths: [0, 1, 2].map((index) => `inputArtifacts[${index}].fileName`),
    jsonSchema: "rejects",
    messages: { [path0("fileName")]: "bare file name" },
  },
  {
    name: "NUL characters are refused in free text (Postgres cannot keep them)",
    valid: false,
    input: {
      sessionId: "s",
      turnId: "t",
      instruction: "a\u0000b",
      solutionContextText: "\u0000",
      inputArtifacts: [artifact({ contents: "x\u0000y" })],
    },
    paths: ["instruction", "solutionContextText", path0("contents")],
    jsonSchema: "rejects",
    messages: { instruction: "NUL", [path0("contents")]: "base64" },
  },
  {
    name: "lone surrogates are refused in every free-text field of a user turn (Postgres cannot keep them)",
    valid: false,
    input: {
      sessionId: "s",
      turnId: "t",
      // An emoji cut in half, as an editor that splits text in UTF-16 units leaves it.
      instruction: `Summarize ${"📄".slice(0, 1)}`,
      solutionContextText: "\uDCC4 at the start",
      workspaceId: "ws-\uD800",
      repo: "acme/\uDBFF",
      language: "\uDFFF",
      ragScope: [{ key: "k\uD83D", operator: "==", values: ["fine 📄", "\uDC00"] }],
      inputArtifacts: [
        artifact({
          relativePath: "src/\uD83D/a.ts",
          fileName: "a\uDCC4.ts",
          contents: "x\uD83D",
          language: "\uD800",
        }),
      ],
    },
    paths: [
      "instruction",
      "solutionContextText",
      "workspaceId",
      "repo",
      "language",
      "ragScope[0].key",
      "ragScope[0].values[1]",
      path0("relativePath"),
      path0("fileName"),
      path0("contents"),
      path0("language"),
    ],
    jsonSchema: "rejects",
    messages: {
      instruction: "lone surrogate",
      [path0("relativePath")]: "lone surrogate",
      [path0("contents")]: "lone surrogate",
    },
  },
  {
    name: "artifact mimeType: longer than RFC 6838 allows (255 characters)",
    valid: false,
    input: withArtifacts(artifact({ mimeType: `text/${"x".repeat(251)}` })),
    paths: [path0("mimeType")],
    jsonSchema: "rejects",
    messages: { [path0("mimeType")]: "at most 255 characters" },
  },
  {
    name: "artifact: a missing enum field is reported as required",
    valid: false,
    input: withArtifacts(artifact({ origin: undefined })),
    paths: [path0("origin")],
    jsonSchema: "rejects",
    messages: { [path0("origin")]: "is required" },
  },
  {
    name: "artifact: origin, encoding and mimeType outside their sets",
    valid: false,
    input: withArtifacts(artifact({ origin: "editor", encoding: "utf-16", mimeType: "text" })),
    paths: [path0("origin"), path0("encoding"), path0("mimeType")],
    jsonSchema: "rejects",
    messages: { [path0("origin")]: '"ide", "user"' },
  },
  {
    name: "artifact: every required field missing",
    valid: false,
    input: withArtifacts({}),
    paths: [path0("relativePath"), path0("fileName"), path0("contents"), path0("origin")],
    jsonSchema: "rejects",
  },
  {
    name: "artifact: not an object; inputArtifacts not an array",
    valid: false,
    input: turn({ inputArtifacts: ["src/index.ts"], clipboardImages: "img" }),
    paths: ["inputArtifacts[0]", "clipboardImages"],
    jsonSchema: "rejects",
  },
  {
    name: "artifact: base64 encoding with text that is not base64",
    valid: false,
    input: withArtifacts(
      artifact({ contents: "not base64!", encoding: "base64" }),
      artifact({ contents: "QQ", encoding: "base64" }),
      artifact({ contents: "QUFB\nQUFB", encoding: "base64" }),
      artifact({ contents: "QUFB-_==", encoding: "base64" }),
    ),
    paths: [0, 1, 2, 3].map((index) => `inputArtifacts[${index}].contents`),
    jsonSchema: "rejects",
    messages: { [path0("contents")]: "standard base64" },
  },
  {
    name: "limits: utf8 artifact over maxArtifactBytes in characters too",
    valid: false,
    limits: { maxArtifactBytes: 8 },
    input: withArtifacts(artifact({ contents: "123456789" })),
    paths: [path0("contents")],
    jsonSchema: "rejects",
  },
  {
    name: "limits: utf8 artifact over maxArtifactBytes only in UTF-8 bytes (5 characters, 10 bytes)",
    valid: false,
    limits: { maxArtifactBytes: 8 },
    input: withArtifacts(artifact({ contents: "ééééé" })),
    paths: [path0("contents")],
    jsonSchema: "zod-only",
    messages: { [path0("contents")]: "at most 8 bytes of UTF-8" },
  },
  {
    name: "limits: base64 artifact decoding to more than maxArtifactBytes",
    valid: false,
    limits: { maxArtifactBytes: 6 },
    input: withArtifacts(artifact({ contents: "AAECAwQFBgcI", encoding: "base64" })),
    paths: [path0("contents")],
    jsonSchema: "rejects",
  },
  {
    name: "limits: artifacts over maxArtifactTotalBytes together, each within its own limit",
    valid: false,
    limits: { maxArtifactTotalBytes: 11 },
    input: withArtifacts(
      artifact({ contents: "abcdef" }),
      artifact({ contents: "AAECAwQF", encoding: "base64" }),
    ),
    paths: ["inputArtifacts"],
    jsonSchema: "zod-only",
    messages: { inputArtifacts: "at most 11 bytes of contents in all" },
  },
  {
    name: "limits: the artifacts' total counts UTF-8 bytes (6 characters, 12 bytes, over 10)",
    valid: false,
    limits: { maxArtifactTotalBytes: 10 },
    input: withArtifacts(artifact({ contents: "ééé" }), artifact({ contents: "ééé" })),
    paths: ["inputArtifacts"],
    jsonSchema: "zod-only",
  },
  {
    name: "limits: more artifacts than maxInputArtifacts",
    valid: false,
    limits: { maxInputArtifacts: 2 },
    input: withArtifacts(artifact(), artifact(), artifact()),
    paths: ["inputArtifacts"],
    jsonSchema: "rejects",
  },
  {
    name: "artifact fileName: 256 emoji are 256 characters, over the 255 limit (limits count code points)",
    valid: false,
    input: withArtifacts(artifact({ fileName: "📄".repeat(256) })),
    paths: [path0("fileName")],
    jsonSchema: "rejects",
    messages: { [path0("fileName")]: "at most 255 characters" },
  },

  // ── clipboard images ──────────────────────────────────────────────────────────────────────────────────
  {
    name: "image: MIME types no provider takes",
    valid: false,
    input: withImages(image({ mimeType: "image/bmp" }), image({ id: "img-2", mimeType: "image/svg+xml" })),
    paths: ["clipboardImages[0].mimeType", "clipboardImages[1].mimeType"],
    jsonSchema: "rejects",
    messages: { "clipboardImages[0].mimeType": '"image/png"' },
  },
  {
    name: "image: data URL instead of bare base64",
    valid: false,
    input: withImages(image({ dataBase64: `data:image/png;base64,${PNG_1X1}` })),
    paths: ["clipboardImages[0].dataBase64"],
    jsonSchema: "rejects",
  },
  {
    name: "image: empty dataBase64",
    valid: false,
    input: withImages(image({ dataBase64: "" })),
    paths: ["clipboardImages[0].dataBase64"],
    jsonSchema: "rejects",
    messages: { "clipboardImages[0].dataBase64": "must not be empty" },
  },
  {
    name: "image: duplicate ids",
    valid: false,
    input: withImages(
      image({ id: "img-1" }),
      image({ id: "img-2" }),
      image({ id: "img-1" }),
      image({ id: "img-2" }),
    ),
    paths: ["clipboardImages[2].id", "clipboardImages[3].id"],
    jsonSchema: "zod-only",
    messages: {
      "clipboardImages[2].id": "must be unique",
      "clipboardImages[3].id": "must be unique: clipboardImages[1] has the same id",
    },
  },
  {
    name: "image: id outside the id alphabet, missing mimeType",
    valid: false,
    input: withImages({ id: "img 1", dataBase64: PNG_1X1 }),
    paths: ["clipboardImages[0].id", "clipboardImages[0].mimeType"],
    jsonSchema: "rejects",
  },
  {
    name: "limits: image decoding to more than maxImageBytes",
    valid: false,
    limits: { maxImageBytes: 3 },
    input: withImages(image({ dataBase64: "AAECAwQF" })),
    paths: ["clipboardImages[0].dataBase64"],
    jsonSchema: "rejects",
  },
  {
    name: "limits: more images than maxClipboardImages",
    valid: false,
    limits: { maxClipboardImages: 1 },
    input: withImages(image({ id: "a" }), image({ id: "b" })),
    paths: ["clipboardImages"],
    jsonSchema: "rejects",
  },

  // ── ragScope ──────────────────────────────────────────────────────────────────────────────────────────
  {
    name: "ragScope: operators outside the four",
    valid: false,
    input: turn({
      ragScope: [
        { key: "project", operator: "=", values: ["x"] },
        { key: "project", operator: "in", values: ["x"] },
      ],
    }),
    paths: ["ragScope[0].operator", "ragScope[1].operator"],
    jsonSchema: "rejects",
    messages: { "ragScope[0].operator": '"does_not_contain"' },
  },
  {
    name: "ragScope: empty values, empty key",
    valid: false,
    input: turn({ ragScope: [{ key: "", operator: "==", values: [] }] }),
    paths: ["ragScope[0].key", "ragScope[0].values"],
    jsonSchema: "rejects",
    messages: { "ragScope[0].values": "at least one value" },
  },
  {
    name: "ragScope: values not an array, ragScope not an array",
    valid: false,
    input: turn({ ragScope: { key: "k", operator: "==", values: "x" } }),
    paths: ["ragScope"],
    jsonSchema: "rejects",
  },
  {
    name: "limits: more conditions than maxRagScopeConditions (an over-long array's items go unchecked)",
    valid: false,
    limits: { maxRagScopeConditions: 1, maxRagScopeValues: 2 },
    input: turn({
      ragScope: [
        { key: "a", operator: "==", values: ["1", "2", "3"] },
        { key: "b", operator: "==", values: ["1"] },
      ],
    }),
    paths: ["ragScope"],
    jsonSchema: "rejects",
    messages: { ragScope: "at most 1 conditions" },
  },
  {
    name: "limits: more values than maxRagScopeValues",
    valid: false,
    limits: { maxRagScopeValues: 2 },
    input: turn({ ragScope: [{ key: "a", operator: "contains", values: ["1", "2", "3"] }] }),
    paths: ["ragScope[0].values"],
    jsonSchema: "rejects",
  },

  // ── other user-turn fields ────────────────────────────────────────────────────────────────────────────
  {
    name: "hints: stream not a boolean, empty workspaceId, bad agentContextId",
    valid: false,
    input: turn({ stream: "true", workspaceId: "", agentContextId: "agent context" }),
    paths: ["stream", "workspaceId", "agentContextId"],
    jsonSchema: "rejects",
    messages: { stream: "must be a boolean, not a string" },
  },
  {
    name: "limits: solutionContextText over maxSolutionContextChars",
    valid: false,
    limits: { maxSolutionContextChars: 5 },
    input: turn({ solutionContextText: "123456" }),
    paths: ["solutionContextText"],
    jsonSchema: "rejects",
  },

  // ── tool results ──────────────────────────────────────────────────────────────────────────────────────
  {
    name: "tool result: a lone surrogate in resultJson (even inside a JSON string) or errorMessage",
    valid: false,
    input: continuation([
      result({ toolCallId: "call_1", resultJson: '"cut \uD83D"' }),
      result({ toolCallId: "call_2", resultJson: undefined, errorMessage: "ENOENT \uDCC4" }),
    ]),
    paths: ["toolResults[0].resultJson", "toolResults[1].errorMessage"],
    jsonSchema: "rejects",
    messages: {
      "toolResults[0].resultJson": "lone surrogate",
      "toolResults[1].errorMessage": "lone surrogate",
    },
  },
  {
    name: "tool result: both resultJson and errorMessage",
    valid: false,
    input: continuation([result({ errorMessage: "failed" })]),
    paths: ["toolResults[0]"],
    jsonSchema: "rejects",
    messages: { "toolResults[0]": "not both" },
  },
  {
    name: "tool result: neither resultJson nor errorMessage",
    valid: false,
    input: continuation([result({ resultJson: undefined })]),
    paths: ["toolResults[0]"],
    jsonSchema: "rejects",
    messages: { "toolResults[0]": "exactly one of resultJson or errorMessage" },
  },
  {
    name: "tool result: resultJson that is not JSON text",
    valid: false,
    input: continuation([
      result({ resultJson: "{lines: [a, b]}" }),
      result({ toolCallId: "c2", resultJson: "" }),
    ]),
    paths: ["toolResults[0].resultJson", "toolResults[1].resultJson"],
    jsonSchema: "zod-only",
    messages: { "toolResults[0].resultJson": "valid JSON text" },
  },
  {
    name: "tool result: resultJson with text after the JSON value, or only whitespace",
    valid: false,
    input: continuation([
      result({ resultJson: '{"ok":true} trailing' }),
      result({ toolCallId: "c2", resultJson: "  " }),
    ]),
    paths: ["toolResults[0].resultJson", "toolResults[1].resultJson"],
    jsonSchema: "zod-only",
  },
  {
    name: "tool result: negative executionMs",
    valid: false,
    input: continuation([result({ executionMs: -1 })]),
    paths: ["toolResults[0].executionMs"],
    jsonSchema: "rejects",
  },
  {
    name: "tool result: executionMs a string, empty errorMessage, bad toolCallId",
    valid: false,
    input: continuation([
      result({ executionMs: "12" }),
      result({ toolCallId: "c2", resultJson: undefined, errorMessage: "" }),
      result({ toolCallId: "call 3" }),
    ]),
    paths: ["toolResults[0].executionMs", "toolResults[1].errorMessage", "toolResults[2].toolCallId"],
    jsonSchema: "rejects",
  },
  {
    name: "tool result: executionMs 1e400, which JSON parses to Infinity, and -1e400",
    valid: false,
    ...fromJson(`{
      "sessionId": "s1",
      "turnId": "t1",
      "toolResults": [
        { "toolCallId": "c1", "executionMs": 1e400, "resultJson": "42" },
        { "toolCallId": "c2", "executionMs": -1e400, "errorMessage": "failed" }
      ]
    }`),
    paths: ["toolResults[0].executionMs", "toolResults[1].executionMs"],
    jsonSchema: "rejects",
    messages: {
      "toolResults[0].executionMs": "must be a number, not a non-finite number (Infinity)",
      "toolResults[1].executionMs": "not a non-finite number (-Infinity)",
    },
  },
  {
    name: "tool continuation: a toolCallId repeating an earlier result's (AGN-033 §3.3)",
    valid: false,
    input: continuation([
      result({ toolCallId: "c1" }),
      result({ toolCallId: "c2" }),
      result({ toolCallId: "c1" }),
      result({ toolCallId: "c1", resultJson: undefined, errorMessage: "failed" }),
    ]),
    paths: ["toolResults[2].toolCallId", "toolResults[3].toolCallId"],
    jsonSchema: "zod-only",
    messages: {
      "toolResults[2].toolCallId": "must be unique: toolResults[0] has the same toolCallId",
      "toolResults[3].toolCallId": "must be unique: toolResults[0] has the same toolCallId",
    },
  },
  {
    name: "tool continuation: empty toolResults",
    valid: false,
    input: continuation([]),
    paths: ["toolResults"],
    jsonSchema: "rejects",
    messages: { toolResults: "at least one tool result" },
  },
  {
    name: "tool continuation: toolResults null",
    valid: false,
    input: continuation(null as unknown as unknown[]),
    paths: ["toolResults"],
    jsonSchema: "rejects",
  },
  {
    name: "limits: more results than maxToolResults",
    valid: false,
    limits: { maxToolResults: 2 },
    input: continuation([result(), result({ toolCallId: "c2" }), result({ toolCallId: "c3" })]),
    paths: ["toolResults"],
    jsonSchema: "rejects",
  },
  {
    name: "limits: resultJson and errorMessage over maxToolResultChars",
    valid: false,
    limits: { maxToolResultChars: 10 },
    input: continuation([
      result({ resultJson: '"0123456789"' }),
      result({ toolCallId: "c2", resultJson: undefined, errorMessage: "0123456789A" }),
    ]),
    paths: ["toolResults[0].resultJson", "toolResults[1].errorMessage"],
    jsonSchema: "rejects",
  },

  // ── not an object ─────────────────────────────────────────────────────────────────────────────────────
  ...(
    [
      ["null", null],
      ["an array", [{ ...ids, instruction: "hi" }]],
      ["a string", JSON.stringify({ ...ids, instruction: "hi" })],
      ["a number", 42],
      ["a boolean", true],
    ] as const
  ).map(
    ([label, input]): RequestVector => ({
      name: `not an object: ${label}`,
      valid: false,
      input,
      paths: [""],
      jsonSchema: "rejects",
      messages: { "": "must be a JSON object" },
    }),
  ),
];
