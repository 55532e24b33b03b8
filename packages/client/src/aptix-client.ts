import {
  type AgentExecuteRequest,
  type AgentExecuteResponse,
  APPROVAL_TOOL_NAME,
  type FileRef,
  type FinalResponse,
  type InvokeWarning,
  isToolContinuationRequest,
  type ModeList,
  type TurnAccepted,
  type TurnStateView,
  type UsageQuery,
  type UsageReport,
} from "@aptix/contracts";
import { approvalHandler } from "./approval-request.js";
import type { AptixClientOptions } from "./aptix-client-options.js";
import { AptixProtocolError } from "./aptix-protocol-error.js";
import type { AptixResult } from "./aptix-result.js";
import type { FileContent } from "./file-content.js";
import { HttpTransport, jsonBody } from "./http-transport.js";
import { callJson, readOrThrow } from "./json-call.js";
import {
  type ResultReader,
  readExecuteResult,
  readFailureResult,
  readModeListResult,
  readSessionResult,
  readTraceResult,
  readTurnAcceptedResult,
  readTurnStateResult,
  readTurnSummaryResult,
  readUsageResult,
  type SessionSummaryJson,
  type TurnSummaryJson,
  type TurnTraceJson,
} from "./lenient-schemas.js";
import { runToolCalls } from "./run-tool-calls.js";
import type { RunTurnOptions } from "./run-turn-options.js";
import { type SessionsApi, sessionsApi } from "./sessions-api.js";
import { streamRound } from "./turn-stream.js";
import type { TurnStreamEvent } from "./turn-stream-event.js";
import { type WorkspacesApi, workspacesApi } from "./workspaces-api.js";

export interface CallOptions {
  /**
   * Aborting stops the request, its retries and its stream; the call rejects with the signal's reason. For
   * `execute`, `stream` and `runTurn`, it also cancels the turn on the server (`cancel`) unless it has ended.
   */
  signal?: AbortSignal;
}

/**
 * `usage`'s range (UTC dates `YYYY-MM-DD`, both included, given together) and grouping; the session grouping is
 * paged (`limit` sessions, the next page after a report's `nextCursor`).
 */
export interface UsageOptions extends CallOptions {
  from?: string;
  to?: string;
  groupBy?: UsageQuery["groupBy"];
  limit?: number;
  cursor?: string;
}

/**
 * The client of the Aptix agent service (docs/http-api.md). It uses only what Node, browsers and VS Code's
 * extension host all have (`fetch`, web streams, `TextDecoder`, `AbortSignal`, `crypto.randomUUID`).
 * Failures the service reports come back as `AptixResult`s; an `AptixProtocolError` is thrown only for an
 * answer the service would never give.
 */
export class AptixClient {
  /**
   * Files server tools produced: `get` takes a `FileRef` of a final answer, or a file id, and fetches the content
   * from this client's `baseUrl` (whatever host the FileRef's absolute `url` names, e.g. a public address).
   */
  readonly files: {
    get(file: FileRef | string, options?: CallOptions): Promise<AptixResult<FileContent>>;
  };
  /** The workspace index the service retrieves `[CONTEXT]` from: push, delete, read, search, drop. */
  readonly workspaces: WorkspacesApi;
  /** The principal's sessions: list, messages, delete. */
  readonly sessions: SessionsApi;
  readonly #transport: HttpTransport;

  constructor(options: AptixClientOptions) {
    this.#transport = new HttpTransport(options);
    this.files = {
      get: async (file, callOptions) =>
        this.#getFile(typeof file === "string" ? file : fileIdOf(file), callOptions),
    };
    this.workspaces = workspacesApi(this.#transport);
    this.sessions = sessionsApi(this.#transport);
  }

  /** Sends one request and returns its answer (a streamed round is read to its `result`). */
  async execute(
    request: AgentExecuteRequest,
    options: CallOptions = {},
  ): Promise<AptixResult<AgentExecuteResponse>> {
    const stop = this.#cancelOnAbort(request, options.signal);
    try {
      return await resultOf(streamRound(this.#transport, request, options.signal));
    } finally {
      stop();
    }
  }

  /**
   * Sends one request as a stream (`stream: true` on a user turn; a tool continuation streams when its turn
   * did) and yields its events, resuming from the last event id when the connection breaks.
   */
  stream(request: AgentExecuteRequest, options: CallOptions = {}): AsyncIterable<TurnStreamEvent> {
    const streamed = isToolContinuationRequest(request) ? request : { ...request, stream: true };
    return this.#streamCancellable(streamed, options.signal);
  }

  async *#streamCancellable(
    request: AgentExecuteRequest,
    signal: AbortSignal | undefined,
  ): AsyncIterable<TurnStreamEvent> {
    const stop = this.#cancelOnAbort(request, signal);
    try {
      yield* streamRound(this.#transport, request, signal);
    } finally {
      stop();
    }
  }

  /**
   * Runs a user turn to its end: for each `client_tool_continuation` it runs the named handlers in the calls'
   * order, sends their results, and goes on until the final response (or a failure, which is returned). The
   * answer's `warnings` are every round's, in order. With `background: true` it only starts the turn: the
   * service's 202 answer (`{ sessionId, turnId, status }`), the turn read later with `getTurn`. `multitask`
   * says what the turn does while its session's turn runs (`reject`, `enqueue`, `interrupt`).
   */
  runTurn(options: RunTurnOptions & { background: true }): Promise<AptixResult<TurnAccepted>>;
  runTurn(options: RunTurnOptions): Promise<AptixResult<FinalResponse>>;
  async runTurn(options: RunTurnOptions): Promise<AptixResult<FinalResponse | TurnAccepted>> {
    if (options.background === true) return this.#startInBackground(options);
    const {
      tools,
      approve,
      onTextDelta,
      onTextReset,
      onCompacted,
      onResponse,
      signal,
      turnId = crypto.randomUUID(),
      ...turn
    } = options;
    const streaming = onTextDelta !== undefined || onTextReset !== undefined || onCompacted !== undefined;
    const request: AgentExecuteRequest = { ...turn, turnId, ...(streaming ? { stream: true } : {}) };
    const stop = this.#cancelOnAbort(request, signal);
    try {
      return await this.#runRounds(request, {
        // The service's approvals are answered by `approve`, whatever `tools` holds.
        tools: { ...tools, [APPROVAL_TOOL_NAME]: approvalHandler(approve) },
        onTextDelta,
        onTextReset,
        onCompacted,
        onResponse,
        signal,
      });
    } finally {
      stop();
    }
  }

  /** A background turn's start: nothing runs here, so neither tools nor text callbacks apply. */
  #startInBackground(options: RunTurnOptions): Promise<AptixResult<TurnAccepted>> {
    const {
      tools: _tools,
      approve: _approve,
      onTextDelta: _onTextDelta,
      onTextReset: _onTextReset,
      onCompacted: _onCompacted,
      onResponse: _onResponse,
      signal,
      turnId = crypto.randomUUID(),
      ...turn
    } = options;
    const body = { ...turn, turnId };
    return callJson(this.#transport, "POST", "/v1/agent/execute", readTurnAcceptedResult, { body, signal });
  }

  /**
   * A turn's status and, once its latest round has ended, the answer a waiting client got
   * (`GET …/turns/:turnId`): how a background turn is polled.
   */
  getTurn(
    turn: { sessionId: string; turnId: string },
    options: CallOptions = {},
  ): Promise<AptixResult<TurnStateView>> {
    const path = `/v1/sessions/${encodeURIComponent(turn.sessionId)}/turns/${encodeURIComponent(turn.turnId)}`;
    return callJson(this.#transport, "GET", path, readTurnStateResult, { signal: options.signal });
  }

  async #runRounds(
    first: AgentExecuteRequest,
    options: Pick<
      RunTurnOptions,
      "tools" | "onTextDelta" | "onTextReset" | "onCompacted" | "onResponse" | "signal"
    >,
  ): Promise<AptixResult<FinalResponse>> {
    const { tools, onTextDelta, onTextReset, onCompacted, onResponse, signal } = options;
    let request = first;
    // The turn's warnings, every round's: the user turn's (WORKSPACE_NOT_FOUND) come before its tool calls.
    const warnings: InvokeWarning[] = [];
    for (let round = 0; ; round++) {
      let text = "";
      const answer = await resultOf(streamRound(this.#transport, request, signal, round), (event) => {
        if (event.type === "output_text.delta") {
          text += event.delta;
          onTextDelta?.(event.delta, text);
        } else if (event.type === "output_text.reset") {
          text = "";
          onTextReset?.();
        } else if (event.type === "context.compacted") {
          const { type: _type, id: _id, ...compaction } = event;
          onCompacted?.(compaction);
        }
      });
      warnings.push(...answer.warnings);
      if (!answer.successful) return { ...answer, warnings };
      const response = answer.result;
      onResponse?.(response);
      if (response.kind === "final") return { ...answer, result: response, warnings };
      const toolResults = await runToolCalls(response.toolCalls, {
        sessionId: response.sessionId,
        turnId: response.turnId,
        tools,
        signal,
      });
      request = { sessionId: response.sessionId, turnId: response.turnId, toolResults };
    }
  }

  /**
   * Cancels a running or awaiting turn (`POST …/turns/:turnId/cancel`): it ends `cancelled`, nothing of it stays
   * in the conversation, and the session takes the next turn at once. A turn already ended answers as it is.
   */
  cancel(
    turn: { sessionId: string; turnId: string },
    options: CallOptions = {},
  ): Promise<AptixResult<TurnSummaryJson>> {
    const path = `/v1/sessions/${encodeURIComponent(turn.sessionId)}/turns/${encodeURIComponent(turn.turnId)}/cancel`;
    return callJson(this.#transport, "POST", path, readTurnSummaryResult, { signal: options.signal });
  }

  /**
   * Takes the session back to where the turn `beforeTurnId` began (`POST …/rewind`): that turn and every later
   * one are kept, `superseded`, and the next user turn continues from there, the model seeing none of them. An
   * edit of an earlier message is a rewind before its turn, then a new user turn. Sent again, it changes
   * nothing; `SESSION_BUSY` while a turn is open. Answers the session's summary.
   */
  rewind(
    request: { sessionId: string; beforeTurnId: string },
    options: CallOptions = {},
  ): Promise<AptixResult<SessionSummaryJson>> {
    const path = `/v1/sessions/${encodeURIComponent(request.sessionId)}/rewind`;
    return callJson(this.#transport, "POST", path, readSessionResult, {
      body: { beforeTurnId: request.beforeTurnId },
      signal: options.signal,
    });
  }

  /**
   * Answers the session's last turn `turnId` again as the turn `newTurnId` (`POST …/turns/:turnId/regenerate`):
   * the session is rewound before it (the old turn kept, `superseded`) and its user input runs again, the model
   * not seeing the old answer. Sent again, the new turn's stored answer. Answered as JSON.
   */
  regenerate(
    request: { sessionId: string; turnId: string; newTurnId: string },
    options: CallOptions = {},
  ): Promise<AptixResult<AgentExecuteResponse>> {
    const path = `/v1/sessions/${encodeURIComponent(request.sessionId)}/turns/${encodeURIComponent(request.turnId)}/regenerate`;
    return callJson(this.#transport, "POST", path, readExecuteResult, {
      body: { newTurnId: request.newTurnId },
      signal: options.signal,
    });
  }

  /**
   * Makes the session `newSessionId` whose conversation is this one's up to (not including) `atTurnId`, all of
   * it when absent (`POST …/fork`): it shares nothing the provider stores with its source, so deleting either
   * never breaks the other. Sent again, the fork's summary. Answers the fork's summary (with `forkedFrom`).
   */
  fork(
    request: { sessionId: string; newSessionId: string; atTurnId?: string },
    options: CallOptions = {},
  ): Promise<AptixResult<SessionSummaryJson>> {
    const { sessionId, ...body } = request;
    const path = `/v1/sessions/${encodeURIComponent(sessionId)}/fork`;
    return callJson(this.#transport, "POST", path, readSessionResult, { body, signal: options.signal });
  }

  /** Cancels the request's turn on the server once `signal` aborts, until the answered stop is called. */
  #cancelOnAbort(request: AgentExecuteRequest, signal: AbortSignal | undefined): () => void {
    if (signal === undefined || signal.aborted) return () => {};
    const cancel = () => {
      // Nobody waits for it: the caller has its abort already, and a turn that ended answers as it is.
      this.cancel(request).catch(() => undefined);
    };
    signal.addEventListener("abort", cancel, { once: true });
    return () => signal.removeEventListener("abort", cancel);
  }

  /**
   * The catalog's modes and the one a new session starts in (`GET /v1/modes`), for a mode picker: the session's
   * current mode is `getSession`'s `mode`; the service changes it (`agent_change_mode`), a client does not.
   */
  modes(options: CallOptions = {}): Promise<AptixResult<ModeList>> {
    return this.#getJson("/v1/modes", readModeListResult, options);
  }

  /** The session's mode, mode history and turns (`GET /v1/sessions/:sessionId`). */
  getSession(sessionId: string, options: CallOptions = {}): Promise<AptixResult<SessionSummaryJson>> {
    return this.#getJson(`/v1/sessions/${encodeURIComponent(sessionId)}`, readSessionResult, options);
  }

  /**
   * The caller's LLM usage and its cost (`GET /v1/usage`), by UTC day (default), model or a page of sessions,
   * with the whole range's total; `from` and `to` (UTC dates, both included) come together, else the current UTC
   * month.
   */
  usage(options: UsageOptions = {}): Promise<AptixResult<UsageReport>> {
    const { signal, ...query } = options;
    const params = new URLSearchParams(
      Object.entries(query).flatMap(([name, value]): [string, string][] =>
        value === undefined ? [] : [[name, String(value)]],
      ),
    ).toString();
    return this.#getJson(`/v1/usage${params === "" ? "" : `?${params}`}`, readUsageResult, { signal });
  }

  /** What the turn sent to the provider and got back (`GET …/turns/:turnId/trace`), for diagnostics. */
  getTurnTrace(
    sessionId: string,
    turnId: string,
    options: CallOptions = {},
  ): Promise<AptixResult<TurnTraceJson>> {
    const path = `/v1/sessions/${encodeURIComponent(sessionId)}/turns/${encodeURIComponent(turnId)}/trace`;
    return this.#getJson(path, readTraceResult, options);
  }

  #getJson<T>(path: string, read: ResultReader<T>, options: CallOptions): Promise<AptixResult<T>> {
    return callJson(this.#transport, "GET", path, read, { signal: options.signal });
  }

  async #getFile(fileId: string, options: CallOptions = {}): Promise<AptixResult<FileContent>> {
    const response = await this.#transport.send("GET", `/v1/files/${encodeURIComponent(fileId)}`, {
      signal: options.signal,
    });
    if (!response.ok) return readOrThrow(response.status, await jsonBody(response), readFailureResult);
    const bytes = new Uint8Array(await response.arrayBuffer());
    const contentType = response.headers.get("content-type") ?? "application/octet-stream";
    return { successful: true, result: { bytes, contentType }, errors: [], warnings: [] };
  }
}

/** Reads a round's events to its result, handing each event to `onEvent` on the way. */
async function resultOf(
  events: AsyncIterable<TurnStreamEvent>,
  onEvent?: (event: TurnStreamEvent) => void,
): Promise<AptixResult<AgentExecuteResponse>> {
  for await (const event of events) {
    onEvent?.(event);
    if (event.type === "result") return event.result;
  }
  throw new AptixProtocolError("The stream ended without a result.");
}

/** The id a FileRef's url (`<public url>/v1/files/<fileId>`, or the path alone) names. */
function fileIdOf(file: FileRef): string {
  try {
    const { pathname } = new URL(file.url, "http://relative.invalid");
    const encoded = /\/v1\/files\/([^/]+)$/.exec(pathname)?.[1];
    if (encoded !== undefined) return decodeURIComponent(encoded);
  } catch {
    // Not a url, or an escape of no UTF-8: nothing the service writes.
  }
  throw new AptixProtocolError(`The url of file ${JSON.stringify(file.name)} names no file: ${file.url}`);
}
