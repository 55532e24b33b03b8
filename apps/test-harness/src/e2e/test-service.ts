import { randomBytes } from "node:crypto";
import {
  type AgentExecuteResponse,
  AgentExecuteResultSchema,
  type ClientToolContinuationResponse,
  type FinalResponse,
  type InvokeError,
  type InvokeResult,
  type SessionSummary,
} from "@aptix/contracts";
import type { TurnTrace } from "@aptix/core/testing";
import { createLogger, type Jsonified, type RunningServer, readServerEnv, startServer } from "@aptix/server";
import type { ScriptedAnthropic } from "@aptix/testing-llm-servers";
import { type ScriptedOpenAI, startScriptedOpenAI } from "@aptix/testing-llm-servers";
import { writeE2ECatalog } from "./test-catalog.js";
import { databaseFor, type TestDatabase, type TestStoreKind } from "./test-database.js";

/** The two principals of `APTIX_API_KEYS`; `anonymous` sends no `Authorization` header. */
export const API_KEYS = {
  alice: "alice-e2e-key-0123456789abcdef",
  bob: "bob-e2e-key-0123456789abcdef01",
} as const;
export type Caller = keyof typeof API_KEYS | "anonymous";

export type SessionSummaryJson = Jsonified<SessionSummary>;
type TurnTraceJson = Jsonified<TurnTrace>;

export interface HttpAnswer<T> {
  status: number;
  headers: Headers;
  body: InvokeResult<T>;
}

export interface TestServiceOptions {
  store: TestStoreKind;
  /** The scripted OpenAI server to talk to; a new one (closed with the service) when absent. */
  harness?: ScriptedOpenAI;
  /**
   * The scripted Anthropic server the `anthropic` provider talks to (`ANTHROPIC_API_KEY` and
   * `ANTHROPIC_BASE_URL` are set in `process.env`, as the OpenAI ones are); not closed with the service.
   */
  anthropic?: ScriptedAnthropic;
  /** The database of another test service: a second instance on the same store (Postgres only). */
  database?: TestDatabase;
  /** More environment for `readServerEnv` (e.g. `APTIX_OPENAI_MAX_RETRIES`). */
  env?: Record<string, string>;
}

export interface TestService extends ServiceClient {
  harness: ScriptedOpenAI;
  database: TestDatabase;
  server: RunningServer;
  /** The server's JSON log lines, parsed. */
  logs: Array<Record<string, unknown>>;
  /** Closes the server, then the harness and the database if this service made them. */
  close(): Promise<void>;
}

/**
 * The environment the e2e servers run with, in this process or a child: port 0 on loopback, the e2e catalog,
 * alice's and bob's API keys, the database, no SDK retries unless a test asks. The OpenAI variables are
 * added by the caller (`startTestService` sets them in `process.env`).
 */
export async function e2eServerEnv(database: TestDatabase): Promise<Record<string, string>> {
  return {
    PORT: "0",
    HOST: "127.0.0.1",
    APTIX_CONFIG: await writeE2ECatalog(),
    APTIX_API_KEYS: `alice:${API_KEYS.alice},bob:${API_KEYS.bob}`,
    APTIX_SHUTDOWN_TIMEOUT_MS: "5000",
    APTIX_OPENAI_MAX_RETRIES: "0",
    ...database.env,
  };
}

/**
 * Starts the real server (`startServer`, real OpenAIResponsesProvider, real store) on 127.0.0.1, port 0,
 * with the e2e catalog and two API keys, talking to a scripted OpenAI server over HTTP.
 *
 * The provider is built by `startServer` itself (no `providers` passed), so the `openai` SDK reads
 * `OPENAI_API_KEY` and `OPENAI_BASE_URL`: they are set in `process.env` here, pointing at the harness.
 * Use one harness per test file (vitest runs each file in its own process).
 */
export async function startTestService(options: TestServiceOptions): Promise<TestService> {
  if (options.database && options.database.kind !== options.store) {
    throw new Error(`a ${options.database.kind} database was given for a ${options.store} service`);
  }
  const harness = options.harness ?? (await startScriptedOpenAI());
  const database = options.database ?? (await databaseFor(options.store));
  process.env.OPENAI_API_KEY = "test";
  process.env.OPENAI_BASE_URL = harness.baseUrl;
  if (options.anthropic) {
    process.env.ANTHROPIC_API_KEY = "test";
    process.env.ANTHROPIC_BASE_URL = options.anthropic.baseUrl;
  }
  const logs: Array<Record<string, unknown>> = [];
  // The service's own logger (redaction, bounded lines) at its most verbose, its lines kept here, not on stdout.
  const logger = createLogger({
    level: "trace",
    destination: { write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) },
  });
  let server: RunningServer;
  try {
    const env = readServerEnv({ ...(await e2eServerEnv(database)), ...options.env });
    server = await startServer(env, logger);
  } catch (error) {
    if (!options.database) await database.dispose();
    if (!options.harness) await harness.close();
    throw error;
  }

  return {
    ...serviceClient(server.url),
    harness,
    database,
    server,
    logs,
    async close() {
      try {
        await server.close();
      } finally {
        if (!options.database) await database.dispose();
        if (!options.harness) await harness.close();
      }
    },
  };
}

export interface ServiceClient {
  url: string;
  /** `POST /v1/agent/execute`; the answer is checked to be an InvokeResult of AGN-033 before it is returned. */
  post(body: unknown, as?: Caller): Promise<HttpAnswer<AgentExecuteResponse>>;
  /** A GET of any route. */
  get<T = unknown>(path: string, as?: Caller): Promise<HttpAnswer<T>>;
  /** Any method on any route, with `body` sent as JSON when given. */
  send<T = unknown>(method: string, path: string, body?: unknown, as?: Caller): Promise<HttpAnswer<T>>;
  session(sessionId: string, as?: Caller): Promise<HttpAnswer<SessionSummaryJson>>;
  trace(sessionId: string, turnId: string, as?: Caller): Promise<HttpAnswer<TurnTraceJson>>;
}

/** A `fetch` client of a running service (in this process or a child process) at `url`. */
export function serviceClient(url: string): ServiceClient {
  const request = async <T>(
    method: string,
    path: string,
    as: Caller,
    body?: unknown,
  ): Promise<HttpAnswer<T>> => {
    const headers: Record<string, string> = {};
    if (as !== "anonymous") headers.authorization = `Bearer ${API_KEYS[as]}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(`${url}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    let parsed: InvokeResult<T>;
    try {
      parsed = JSON.parse(text) as InvokeResult<T>;
    } catch {
      throw new Error(`${method} ${path} answered ${response.status} with a body that is not JSON: ${text}`);
    }
    return { status: response.status, headers: response.headers, body: parsed };
  };
  return {
    url,
    async post(body, as = "alice") {
      const answer = await request<AgentExecuteResponse>("POST", "/v1/agent/execute", as, body);
      const checked = AgentExecuteResultSchema.safeParse(answer.body);
      if (!checked.success) {
        throw new Error(
          `POST /v1/agent/execute answered a body that is not InvokeResult<AgentExecuteResponse>: ${JSON.stringify(answer.body)}\n${checked.error.message}`,
        );
      }
      return answer;
    },
    get: (path, as = "alice") => request("GET", path, as),
    send: (method, path, body, as = "alice") => request(method, path, as, body),
    session: (sessionId, as = "alice") => request("GET", `/v1/sessions/${encodeURIComponent(sessionId)}`, as),
    trace: (sessionId, turnId, as = "alice") =>
      request(
        "GET",
        `/v1/sessions/${encodeURIComponent(sessionId)}/turns/${encodeURIComponent(turnId)}/trace`,
        as,
      ),
  };
}

/** A fresh session id: tests share their service, so each scenario names sessions of its own. */
export function uniqueId(prefix: string): string {
  return `${prefix}-${randomBytes(5).toString("hex")}`;
}

export function userTurn(
  sessionId: string,
  turnId: string,
  instruction: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { sessionId, turnId, instruction, ...extra };
}

export function toolContinuation(
  sessionId: string,
  turnId: string,
  toolResults: Array<{
    toolCallId: string;
    resultJson?: string;
    errorMessage?: string;
    executionMs?: number;
  }>,
): Record<string, unknown> {
  return {
    sessionId,
    turnId,
    toolResults: toolResults.map((result) => ({ executionMs: 3, ...result })),
  };
}

function describeAnswer(answer: HttpAnswer<unknown>): string {
  return `${answer.status} ${JSON.stringify(answer.body)}`;
}

/** The final response of a 200 answer; throws with the whole answer otherwise. */
export function expectFinal(answer: HttpAnswer<AgentExecuteResponse>): FinalResponse {
  if (answer.status !== 200 || !answer.body.successful || answer.body.result.kind !== "final") {
    throw new Error(`expected 200 with a final response, got ${describeAnswer(answer)}`);
  }
  return answer.body.result;
}

/** The client tool continuation of a 200 answer; throws with the whole answer otherwise. */
export function expectContinuation(answer: HttpAnswer<AgentExecuteResponse>): ClientToolContinuationResponse {
  if (
    answer.status !== 200 ||
    !answer.body.successful ||
    answer.body.result.kind !== "client_tool_continuation"
  ) {
    throw new Error(`expected 200 with a client tool continuation, got ${describeAnswer(answer)}`);
  }
  return answer.body.result;
}

/** The result of a 200 answer; throws with the whole answer otherwise. */
export function expectOk<T>(answer: HttpAnswer<T>): T {
  if (answer.status !== 200 || !answer.body.successful) {
    throw new Error(`expected 200 and a successful result, got ${describeAnswer(answer)}`);
  }
  return answer.body.result;
}

/** The first error of a failed answer, after checking its HTTP status and code; throws otherwise. */
export function expectFailure(answer: HttpAnswer<unknown>, status: number, code: string): InvokeError {
  const error = answer.body.successful ? undefined : answer.body.errors[0];
  if (answer.status !== status || error?.code !== code || "result" in answer.body) {
    throw new Error(`expected ${status} ${code}, got ${describeAnswer(answer)}`);
  }
  return error;
}

/**
 * What every scenario checks at its end: every request the harness received validated against the official
 * `CreateResponse` schema, and no scripted step was left over. Then the harness is reset for the next test.
 */
export function checkAndResetHarness(harness: ScriptedOpenAI): void {
  const invalid = harness
    .responseRequests()
    .filter((request) => request.schemaErrors !== undefined)
    .map((request) => `#${request.index}: ${JSON.stringify(request.schemaErrors)}`);
  const pending = harness.pendingSteps();
  harness.reset();
  if (invalid.length > 0) {
    throw new Error(`requests failed the CreateResponse schema:\n${invalid.join("\n")}`);
  }
  if (pending > 0) throw new Error(`${pending} scripted step(s) were left over`);
}

/** Polls `condition` every 10 ms until it holds; throws after `timeoutMs`. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
