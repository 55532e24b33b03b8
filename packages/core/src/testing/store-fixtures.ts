import { randomUUID } from "node:crypto";
import {
  type AgentExecuteResponse,
  type FileRef,
  fail,
  type InvokeFailure,
  type InvokeResult,
  ok,
} from "@aptix/contracts";
import type { StoredFile } from "../ports/file-store.js";
import type { SessionStores } from "../ports/session-stores.js";
import type { Lease, LlmCallWrite, NewSession, TurnWrite } from "../ports/turn-store.js";
import type { ConversationCursor } from "../records/conversation-cursor.js";
import type { LlmCallRecord } from "../records/llm-call-record.js";
import type { ModeHistoryEntry } from "../records/mode-history-entry.js";
import type { SessionKey, SessionPatch, SessionRecord } from "../records/session-record.js";
import type { TranscriptItem } from "../records/transcript-item.js";
import type { PendingToolCalls, TurnPatch, TurnRecord, TurnRound } from "../records/turn-record.js";

/*
 * Small builders of valid records for store tests. Every builder answers a fresh object, holds no
 * `undefined`-valued keys (so a store that drops them, as JSON does, still round-trips exactly) and takes
 * overrides for the fields a test cares about.
 */

/** The default time of fixtures; equal to `MANUAL_CLOCK_START`. */
export const FIXTURE_TIME = new Date("2025-01-01T00:00:00.000Z");

/** A `sha256:` content hash made of one repeated hex digit. */
function fixtureHash(digit = "a"): string {
  return `sha256:${digit.repeat(64)}`;
}

export function newSessionKey(sessionId = "session-1", principal = "principal-a"): SessionKey {
  return { principal, sessionId };
}

/** A lease of `owner` lasting `durationMs` from the store's now. */
export function newLease(owner: string, durationMs: number): Lease {
  return { owner, durationMs };
}

/** What a fixture session is created with. */
const FIXTURE_SESSION = {
  conversationContextId: "conv-1",
  agentContextId: "agent-1",
  mode: "code",
} as const satisfies NewSession;

/**
 * Claims the session `key` for `lease.owner` through `TurnStore.write`, with `writes` made in the same step,
 * creating it (as `FIXTURE_SESSION`) when it does not exist; throws unless it applied. The session as written.
 */
export async function claimSessionFor(
  stores: Pick<SessionStores, "turns" | "directory">,
  key: SessionKey,
  lease: Lease,
  now: Date,
  writes: Pick<
    Extract<TurnWrite, { guard: "version" }>,
    "turnPatches" | "sessionPatch" | "insertTurn" | "modeChange" | "releaseLease" | "maxRunningTurns"
  > = {},
): Promise<SessionRecord> {
  const read = await stores.directory.getSession(key);
  const applied = await stores.turns.write({
    key,
    lease,
    now,
    ...(read
      ? { guard: "version", expectVersion: read.version }
      : { guard: "create", create: { ...FIXTURE_SESSION } }),
    ...writes,
  });
  if (applied.outcome !== "applied") throw new Error(`expected applied, got ${applied.outcome}`);
  return applied.session;
}

/** Starts `turn` as its session's open turn under a new lease of `lease.owner` (see `claimSessionFor`). */
export function startTurnFor(
  stores: Pick<SessionStores, "turns" | "directory">,
  turn: TurnRecord,
  lease: Lease,
): Promise<SessionRecord> {
  const key = { principal: turn.principal, sessionId: turn.sessionId };
  return claimSessionFor(stores, key, lease, new Date(turn.createdAt), {
    insertTurn: turn,
    sessionPatch: { openTurnId: turn.turnId },
  });
}

/**
 * Writes one turn's patch (with a session patch and LLM calls, when given) as the lease's holder `leaseOwner`
 * does while its turn runs: `TurnStore.write` guarded by the lease, stamped `now`. Answers
 * whether it applied.
 */
export async function writeTurnWhileLeaseHeld(
  stores: Pick<SessionStores, "turns">,
  now: Date,
  write: {
    key: SessionKey;
    turnId: string;
    turnPatch: TurnPatch;
    sessionPatch?: SessionPatch;
    leaseOwner: string;
    releaseLease?: boolean;
    llmCalls?: readonly LlmCallWrite[];
  },
): Promise<boolean> {
  const { key, turnId, turnPatch, leaseOwner, ...rest } = write;
  const applied = await stores.turns.write({
    guard: "lease",
    key,
    owner: leaseOwner,
    now,
    turnPatches: [{ turnId, patch: turnPatch }],
    ...rest,
  });
  return applied.outcome === "applied";
}

export function newCursor(overrides: Partial<ConversationCursor> = {}): ConversationCursor {
  return { responseId: null, pendingInput: [], transcriptLength: 0, ...overrides };
}

/** An unanswered round of a user turn whose hash is made of `digit`; add `result` to answer it. */
export function newRound(key: SessionKey, turnId: string, digit = "1"): TurnRound {
  return {
    request: { sessionId: key.sessionId, turnId, instruction: `request ${digit}` },
    requestHash: fixtureHash(digit),
  };
}

/** A running turn with one open round, created (and last updated) at `overrides.createdAt ?? FIXTURE_TIME`. */
export function newTurnRecord(
  key: SessionKey,
  turnId: string,
  overrides: Partial<TurnRecord> = {},
): TurnRecord {
  const createdAt = overrides.createdAt ?? FIXTURE_TIME;
  return {
    principal: key.principal,
    sessionId: key.sessionId,
    turnId,
    sequence: 0,
    status: "running",
    mode: "code",
    stream: false,
    rounds: [newRound(key, turnId, "1")],
    pending: null,
    startCursor: newCursor(),
    toolExecutions: [],
    files: [],
    usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    llmCallCount: 0,
    error: null,
    createdAt: new Date(createdAt),
    updatedAt: new Date(createdAt),
    completedAt: null,
    ...overrides,
  };
}

/** A successful LLM call of `turnId`, with a composed request, a normalized response and raw provider JSON. */
export function newCallRecord(
  key: SessionKey,
  turnId: string,
  index: number,
  overrides: Partial<LlmCallRecord> = {},
): LlmCallRecord {
  return {
    // A call of its own every time, as every call made is.
    callId: randomUUID(),
    principal: key.principal,
    sessionId: key.sessionId,
    turnId,
    index,
    provider: "openai",
    request: {
      model: "gpt-test",
      continuation:
        index === 0 ? { type: "none" } : { type: "previous_response", responseId: `resp_${index - 1}` },
      input: [{ type: "user_message", content: [{ type: "text", text: `call ${index}` }] }],
      tools: [
        {
          name: "read_file",
          description: "Reads a file of the workspace.",
          parameters: {
            type: "object",
            properties: { path: { type: "string" } },
            required: ["path"],
            additionalProperties: false,
          },
          strict: true,
        },
      ],
      toolChoice: { type: "auto" },
      maxOutputTokens: 4096,
    },
    response: {
      responseId: `resp_${index}`,
      output: [
        { type: "reasoning", provider: "openai", data: { id: `rs_${index}`, summary: [] } },
        {
          type: "function_call",
          callId: `call_${index}`,
          name: "read_file",
          argumentsJson: '{"path":"a.ts"}',
        },
      ],
      text: "",
      toolCalls: [{ callId: `call_${index}`, name: "read_file", argumentsJson: '{"path":"a.ts"}' }],
      usage: { inputTokens: 120, outputTokens: 30, cachedInputTokens: 100, reasoningTokens: 12 },
      finishReason: "tool_calls",
    },
    providerRequest: {
      model: "gpt-test",
      input: [{ role: "user", content: `call ${index}` }],
      tools: [{ type: "function", name: "read_file", parameters: { type: "object" }, strict: true }],
      store: true,
    },
    providerResponse: { id: `resp_${index}`, status: "completed", output: [{ type: "function_call" }] },
    error: null,
    startedAt: new Date(FIXTURE_TIME),
    durationMs: 250 + index,
    ...overrides,
  };
}

/** An LLM call of `turnId` that failed: no response, a provider error with details. */
export function newFailedCallRecord(
  key: SessionKey,
  turnId: string,
  index: number,
  overrides: Partial<LlmCallRecord> = {},
): LlmCallRecord {
  return newCallRecord(key, turnId, index, {
    response: null,
    providerResponse: { error: { type: "server_error", message: "upstream timeout" } },
    error: {
      code: "PROVIDER_ERROR",
      message: "The LLM provider failed.",
      details: { status: 503, code: "server_error", retryable: true },
    },
    ...overrides,
  });
}

export function newModeHistoryEntry(
  key: SessionKey,
  turnId: string,
  previousMode: string,
  newMode: string,
  overrides: Partial<ModeHistoryEntry> = {},
): ModeHistoryEntry {
  return {
    principal: key.principal,
    sessionId: key.sessionId,
    turnId,
    previousMode,
    newMode,
    reason: `switch from ${previousMode} to ${newMode}`,
    changedBy: key.principal,
    changedAt: new Date(FIXTURE_TIME),
    ...overrides,
  };
}

/** One item of every `TranscriptItem` variant (and every content part), with nested provider data. */
export function sampleTranscriptItems(): TranscriptItem[] {
  return [
    { type: "system_message", text: "You are Aptix.\n[MODE] code" },
    {
      type: "user_message",
      content: [
        { type: "text", text: "Fix the bug in ünïcödé.ts — see the screenshot 📷" },
        {
          type: "image",
          mimeType: "image/png",
          dataBase64:
            "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
        },
        { type: "file", fileName: "notes.txt", mimeType: "text/plain", dataBase64: "aGVsbG8gd29ybGQ=" },
      ],
    },
    {
      type: "reasoning",
      provider: "openai",
      data: {
        id: "rs_1",
        type: "reasoning",
        summary: [{ type: "summary_text", text: "Look at the file first." }],
        encrypted_content: "gAAAAB...",
        nested: { list: [1, 2.5, true, null, { deep: ["x"] }], empty: {} },
      },
    },
    { type: "function_call", callId: "call_1", name: "read_file", argumentsJson: '{"path":"src/a.ts"}' },
    { type: "function_call_output", callId: "call_1", output: '{"content":"export {}"}', isError: false },
    { type: "function_call_output", callId: "call_2", output: "file not found", isError: true },
    { type: "assistant_message", text: "Done: the bug was an off-by-one." },
  ];
}

/** What a turn awaiting one client tool (after one server tool) holds. */
export function newPendingToolCalls(): PendingToolCalls {
  return {
    calls: [
      { callId: "call_s", name: "read_file", argumentsJson: '{"path":"a.ts"}' },
      { callId: "call_c", name: "apply_edit", argumentsJson: '{"path":"a.ts","edits":[{"line":3}]}' },
    ],
    clientCallIds: ["call_c"],
    serverOutputs: [
      { type: "function_call_output", callId: "call_s", output: '{"content":"x"}', isError: false },
    ],
    resumeCursor: newCursor({
      responseId: "resp_0",
      pendingInput: [{ type: "user_message", content: [{ type: "text", text: "pending" }] }],
      transcriptLength: 2,
    }),
  };
}

/** A file reference with every optional field. */
export function newFileRef(fileId = "file_1"): FileRef {
  return {
    name: "patch.diff",
    mimeType: "text/x-diff",
    url: `/v1/files/${fileId}`,
    sizeBytes: 42,
    contentHash: fixtureHash("b"),
    description: "The change",
    contentExpires: "2025-01-02T00:00:00.000Z",
  };
}

/** A successful final answer with every optional bucket filled. */
export function newFinalResult(key: SessionKey, turnId: string): InvokeResult<AgentExecuteResponse> {
  return ok(
    {
      kind: "final",
      sessionId: key.sessionId,
      turnId,
      modeDisplayName: "Code",
      primaryOutputText: "# Done\n\nFixed `a.ts`.",
      files: [newFileRef()],
      toolResults: [
        { toolCallId: "call_s", name: "read_file", executionMs: 3, resultJson: '{"content":"x"}' },
        { toolCallId: "call_t", name: "search", executionMs: 0, errorMessage: "index unavailable" },
      ],
      userWarnings: [{ code: "CONTEXT_TRUNCATED", message: "Some context was left out." }],
      usage: { inputTokens: 300, outputTokens: 80, totalTokens: 380, cachedInputTokens: 200, llmCalls: 2 },
    },
    [{ code: "SLOW_PROVIDER", message: "The provider answered slowly." }],
  );
}

/** A client tool continuation answer. */
export function newContinuationResult(key: SessionKey, turnId: string): InvokeResult<AgentExecuteResponse> {
  return ok({
    kind: "client_tool_continuation",
    sessionId: key.sessionId,
    turnId,
    modeDisplayName: "Code",
    toolCalls: [
      { toolCallId: "call_c", name: "apply_edit", argumentsJson: '{"path":"a.ts","edits":[{"line":3}]}' },
    ],
    toolContinuationMessage: "Applying the edit.",
  });
}

/** A failure with nested details. */
export function newFailureResult(): InvokeFailure {
  return fail("TOOL_RESULTS_MISMATCH", "Tool results do not match the turn's tool calls.", {
    expected: ["call_c"],
    received: ["call_x", "call_y"],
    position: { index: 0, reason: "id" },
  });
}

/** A file's metadata, created at `FIXTURE_TIME` and never expiring unless overridden. */
export function newStoredFile(
  principal: string,
  fileId: string,
  overrides: Partial<StoredFile> = {},
): StoredFile {
  return {
    fileId,
    principal,
    name: "patch.diff",
    mimeType: "text/x-diff",
    sizeBytes: 4,
    contentHash: fixtureHash("c"),
    createdAt: new Date(FIXTURE_TIME),
    expiresAt: null,
    ...overrides,
  };
}
