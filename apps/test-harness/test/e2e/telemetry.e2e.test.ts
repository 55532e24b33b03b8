/**
 * Traces and metrics of the real server over HTTP on Postgres (docs/operations.md): spans exported with OTLP/HTTP to a
 * collector on loopback, GenAI-named and linked, with token counts and without the user's words; `GET /metrics`
 * in Prometheus's text format, counting what the turns did, for loopback callers or holders of the metrics token.
 */
import { request as httpRequest } from "node:http";
import { networkInterfaces } from "node:os";
import { type ScriptedOpenAI, startScriptedOpenAI, step } from "@aptix/testing-llm-servers";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  API_KEYS,
  CREATE_FILE_CATALOG,
  checkAndResetHarness,
  expectContinuation,
  expectFinal,
  expectOk,
  type OtlpReceiver,
  type ReceivedSpan,
  resultOf,
  type ServiceClient,
  serviceClient,
  startOtlpReceiver,
  startTestService,
  streamExecute,
  TEST_MODEL,
  type TestService,
  toolContinuation,
  uniqueId,
  userTurn,
  waitFor,
  writeCatalog,
} from "../../src/e2e/index.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 90_000 });

const METRICS_TOKEN = "metrics-e2e-token-0123456789";

let harness: ScriptedOpenAI;
/** The config's price of the test model, USD per million tokens. */
const PRICE = { inputPerMTok: 1, cachedInputPerMTok: 0.5, outputPerMTok: 4 };
let receiver: OtlpReceiver;
let service: TestService;
/** The service over 127.0.0.1 (it listens on every interface, to be reached from another address too). */
let client: ServiceClient;
let closed = false;

beforeAll(async () => {
  harness = await startScriptedOpenAI();
  receiver = await startOtlpReceiver();
  service = await startTestService({
    store: "postgres",
    harness,
    env: {
      APTIX_CONFIG: await writeCatalog({ ...CREATE_FILE_CATALOG, prices: { [TEST_MODEL]: PRICE } }),
      HOST: "0.0.0.0",
      APTIX_METRICS_TOKEN: METRICS_TOKEN,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: "aptix-e2e",
    },
  });
  client = serviceClient(`http://127.0.0.1:${service.server.port}`);
});

afterAll(async () => {
  if (!closed) await service?.close();
  await harness?.close();
  await receiver?.close();
});

afterEach(() => {
  checkAndResetHarness(harness);
});

/**
 * A turn whose model makes a file with create_file, then answers; each call reports the usage given. With a
 * workspace, the turn searches it for its [CONTEXT] first.
 */
async function turnWithServerTool(sessionId: string, instruction: string, workspaceId?: string) {
  harness.script(
    step.functionCalls(
      [
        {
          name: "create_file",
          callId: "call_make",
          arguments: {
            name: "notes.txt",
            mimeType: "text/plain",
            content: `${instruction} (file body)`,
            encoding: null,
            description: null,
          },
        },
      ],
      { usage: { input_tokens: 120, output_tokens: 30, input_tokens_details: { cached_tokens: 100 } } },
    ),
    step.text("Made notes.txt.", { usage: { input_tokens: 170, output_tokens: 8 } }),
  );
  return expectFinal(
    await client.post(
      userTurn(sessionId, "t1", instruction, workspaceId === undefined ? {} : { workspaceId }),
    ),
  );
}

const attribute = (span: ReceivedSpan, key: string) => span.attributes[key];

describe("traces (OTLP to a collector on loopback)", () => {
  it("gives a turn with a server tool its HTTP, invoke_agent, retrieval, chat and execute_tool spans, GenAI-named, linked and counted, none carrying the instruction", async () => {
    const secret = `Summarize the merger memo ${uniqueId("secret")}`;
    const sessionId = uniqueId("traced");
    const workspaceId = uniqueId("ws");
    expectOk(
      await client.send("PUT", `/v1/workspaces/${workspaceId}/documents`, {
        documents: [{ path: "docs/merger.md", contents: "# Merger\n\nThe merger memo lists the terms." }],
      }),
    );
    const final = await turnWithServerTool(sessionId, secret, workspaceId);
    expect(final.files).toHaveLength(1);

    // The batch processor sends on its own schedule: wait for the turn's spans, however long the machine takes.
    const turnSpan = () =>
      receiver.spans.find((span) => attribute(span, "gen_ai.conversation.id") === sessionId);
    await waitFor(() => turnSpan() !== undefined, "the turn's span", 45_000);
    const agent = turnSpan() as ReceivedSpan;
    const inTrace = () => receiver.spans.filter((span) => span.traceId === agent.traceId);
    await waitFor(() => inTrace().length >= 6, "the trace's six spans", 45_000);
    const spans = inTrace();
    const named = (name: string) => spans.filter((span) => span.name === name);

    const [http] = named("POST /v1/agent/execute");
    expect(http).toBeDefined();
    expect(http?.kind).toBe(2);
    expect(http?.parentSpanId).toBeUndefined();
    expect(http?.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/v1/agent/execute",
      "url.path": "/v1/agent/execute",
      "http.response.status_code": 200,
    });
    expect(http?.resource["service.name"]).toBe("aptix-e2e");

    expect(agent.name).toBe("invoke_agent general");
    expect(agent.parentSpanId).toBe(http?.spanId);
    expect(agent.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "general",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": TEST_MODEL,
      "aptix.turn.id": "t1",
      "aptix.turn.round": 0,
      "aptix.turn.outcome": "completed",
      "gen_ai.usage.input_tokens": 290,
      "gen_ai.usage.output_tokens": 38,
    });

    const chats = named(`chat ${TEST_MODEL}`);
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(chat.parentSpanId).toBe(agent.spanId);
      expect(chat.kind).toBe(3);
      expect(chat.attributes).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": TEST_MODEL,
      });
      expect(attribute(chat, "gen_ai.response.id")).toMatch(/^resp_/);
    }
    const usage = chats.map((chat) => [
      attribute(chat, "gen_ai.usage.input_tokens"),
      attribute(chat, "gen_ai.usage.output_tokens"),
      attribute(chat, "gen_ai.response.finish_reasons"),
    ]);
    expect(usage).toEqual(
      expect.arrayContaining([
        [120, 30, ["tool_calls"]],
        [170, 8, ["stop"]],
      ]),
    );

    const [tool] = named("execute_tool create_file");
    expect(tool?.parentSpanId).toBe(agent.spanId);
    expect(tool?.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "create_file",
      "gen_ai.tool.call.id": "call_make",
      "aptix.tool.outcome": "ok",
    });

    const [retrieval] = named(`retrieval ${workspaceId}`);
    expect(retrieval?.parentSpanId).toBe(agent.spanId);
    expect(retrieval?.attributes).toMatchObject({
      "gen_ai.operation.name": "retrieval",
      "gen_ai.data_source.id": workspaceId,
      "aptix.retrieval.outcome": "found",
      "aptix.retrieval.chunks": 1,
    });

    // Nothing the user or the model wrote is an attribute: not the instruction, not the tool's arguments.
    const exported = receiver.bodies.join("\n");
    expect(exported).not.toContain(secret);
    expect(exported).not.toContain("file body");
    expect(exported).not.toContain("Made notes.txt.");
  });
});

describe("traces of a streamed turn", () => {
  it("nests its invoke_agent and chat spans under the request's span, though the request's ends as the stream opens", async () => {
    const sessionId = uniqueId("streamed");
    harness.script(step.text(["Streamed ", "answer."], { usage: { input_tokens: 50, output_tokens: 4 } }));
    const stream = await streamExecute(
      client.url,
      { ...userTurn(sessionId, "t1", "Stream it"), stream: true },
      API_KEYS.alice,
    );
    expect(stream.status).toBe(200);
    expect(resultOf(await stream.readToEnd()).successful).toBe(true);

    const agent = () =>
      receiver.spans.find((span) => attribute(span, "gen_ai.conversation.id") === sessionId);
    await waitFor(() => agent() !== undefined, "the streamed turn's span", 45_000);
    const turn = agent() as ReceivedSpan;
    const parentOf = (span: ReceivedSpan) =>
      receiver.spans.find((other) => other.spanId === span.parentSpanId);
    await waitFor(() => parentOf(turn) !== undefined, "the request's span", 45_000);
    expect(parentOf(turn)?.name).toBe("POST /v1/agent/execute");
    const chat = () => receiver.spans.find((span) => span.parentSpanId === turn.spanId);
    await waitFor(() => chat() !== undefined, "the chat span", 45_000);
    expect(chat()?.attributes).toMatchObject({
      "gen_ai.request.stream": true,
      "gen_ai.usage.input_tokens": 50,
      "gen_ai.usage.output_tokens": 4,
    });
  });
});

/** One sample's value from Prometheus text, e.g. `aptix_turns_total{outcome="completed"}`; 0 when absent. */
function sample(text: string, series: string): number {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

async function scrape(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}/metrics`, { headers });
}

async function metricsText(): Promise<string> {
  const response = await scrape(client.url);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

/**
 * One request with a wrong API key, sent from 127.0.0.2: its failed authentications lock out that address only,
 * not the other tests' 127.0.0.1. Answers the status.
 */
function guessKey(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: "127.0.0.1",
        port,
        path: "/v1/sessions",
        localAddress: "127.0.0.2",
        headers: { authorization: "Bearer wrong" },
      },
      (response) => {
        response.resume();
        response.on("end", () => resolve(response.statusCode ?? 0));
      },
    );
    request.on("error", reject);
    request.end();
  });
}

/** An address of this machine other than loopback, if it has one: a caller the metrics must not trust. */
const otherAddress = Object.values(networkInterfaces())
  .flat()
  .find((info) => info?.family === "IPv4" && !info.internal)?.address;

describe("GET /metrics (Prometheus text)", () => {
  it("counts turns, their durations, LLM calls, tokens and server tool runs, beside the default process metrics", async () => {
    const before = await metricsText();
    for (const index of [1, 2]) {
      await turnWithServerTool(uniqueId(`metered-${index}`), "Write notes");
    }
    const after = await metricsText();
    const delta = (series: string) => sample(after, series) - sample(before, series);

    expect(delta('aptix_turns_total{outcome="completed"}')).toBe(2);
    expect(delta("aptix_turn_duration_seconds_count")).toBe(2);
    expect(delta(`aptix_llm_call_duration_seconds_count{provider="openai",model="${TEST_MODEL}"}`)).toBe(4);
    expect(delta('aptix_tokens_total{provider="openai",direction="input"}')).toBe(2 * (120 + 170));
    expect(delta('aptix_tokens_total{provider="openai",direction="output"}')).toBe(2 * (30 + 8));
    expect(delta('aptix_tokens_total{provider="openai",direction="cached_input"}')).toBe(2 * 100);
    // Priced by the config: 20 uncached and 100 cached input, 30 output; then 170 input, 8 output.
    const turnCost = (20 * 1 + 100 * 0.5 + 30 * 4 + 170 * 1 + 8 * 4) / 1e6;
    expect(delta(`aptix_cost_usd_total{provider="openai",model="${TEST_MODEL}"}`)).toBeCloseTo(
      2 * turnCost,
      12,
    );
    expect(delta('aptix_tool_calls_total{tool="create_file",outcome="ok"}')).toBe(2);
    expect(sample(after, "aptix_running_turns")).toBe(0);
    const poolInUse = sample(after, "aptix_db_pool_in_use");
    expect(poolInUse).toBeGreaterThanOrEqual(0);
    expect(poolInUse).toBeLessThanOrEqual(4);
    expect(after).toMatch(/^# TYPE aptix_turn_duration_seconds histogram$/m);
    expect(after).toMatch(/^# TYPE aptix_rate_limited_total counter$/m);
    // prom-client's defaults: the process and the event loop.
    expect(after).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(after).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
  });

  it("times HTTP requests by method, route template and status, never by the path asked for", async () => {
    const sessionId = uniqueId("routed");
    const before = await metricsText();
    harness.script(step.text("Routed."));
    expectFinal(await client.post(userTurn(sessionId, "t1", "Hello")));
    expectOk(await client.session(sessionId));
    expect((await fetch(`${client.url}/no/such/path`)).status).toBe(404);
    const after = await metricsText();
    const delta = (series: string) => sample(after, series) - sample(before, series);
    const series = (method: string, route: string, status: number) =>
      `http_server_request_duration_seconds_count{http_request_method="${method}",http_route="${route}",http_response_status_code="${status}"}`;

    expect(delta(series("POST", "/v1/agent/execute", 200))).toBe(1);
    expect(delta(series("GET", "/v1/sessions/:sessionId", 200))).toBe(1);
    // A path no route serves has no route: it cannot add a series per path.
    expect(delta(series("GET", "", 404))).toBe(1);
    expect(after).toMatch(/^# TYPE http_server_request_duration_seconds histogram$/m);
    expect(after).not.toContain(sessionId);
    expect(after).not.toContain("/no/such/path");
  });

  it("counts a turn that hands tools to its client once per round: awaiting_client_tools, then completed", async () => {
    const before = await metricsText();
    const sessionId = uniqueId("client-tools");
    harness.script(
      step.functionCalls([{ name: "read_file", arguments: { path: "a.ts" }, callId: "call_read" }]),
      step.text("Read it."),
    );
    expectContinuation(await client.post(userTurn(sessionId, "t1", "Read a.ts")));
    const between = await metricsText();
    expectFinal(
      await client.post(
        toolContinuation(sessionId, "t1", [{ toolCallId: "call_read", resultJson: '"export {}"' }]),
      ),
    );
    const after = await metricsText();
    const delta = (from: string, to: string, series: string) => sample(to, series) - sample(from, series);
    expect(delta(before, between, 'aptix_turns_total{outcome="awaiting_client_tools"}')).toBe(1);
    expect(delta(before, between, 'aptix_turns_total{outcome="completed"}')).toBe(0);
    expect(delta(between, after, 'aptix_turns_total{outcome="completed"}')).toBe(1);
    expect(delta(before, after, "aptix_turn_duration_seconds_count")).toBe(2);
    // A client tool is not the server's: no server tool run was counted.
    expect(after).not.toMatch(/aptix_tool_calls_total\{tool="read_file"/);
  });

  it("counts the requests refused RATE_LIMITED", async () => {
    const before = sample(await metricsText(), "aptix_rate_limited_total");
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 22; attempt++) statuses.push(await guessKey(service.server.port));
    expect(statuses.filter((status) => status === 429)).toHaveLength(2);
    expect(sample(await metricsText(), "aptix_rate_limited_total") - before).toBe(2);
  });

  it.skipIf(otherAddress === undefined)(
    "answers a caller on another address only with the metrics token, 401 with the error envelope otherwise",
    async () => {
      const remote = `http://${otherAddress}:${service.server.port}`;
      const refused = await scrape(remote);
      expect(refused.status).toBe(401);
      expect(refused.headers.get("www-authenticate")).toMatch(/^Bearer /);
      expect(await refused.json()).toMatchObject({
        successful: false,
        errors: [{ code: "UNAUTHORIZED", message: expect.stringContaining("APTIX_METRICS_TOKEN") }],
      });
      const wrong = await scrape(remote, { authorization: `Bearer ${API_KEYS.alice}` });
      expect(wrong.status).toBe(401);
      await wrong.arrayBuffer();
      const allowed = await scrape(remote, { authorization: `Bearer ${METRICS_TOKEN}` });
      expect(allowed.status).toBe(200);
      expect(await allowed.text()).toMatch(/^# TYPE aptix_turns_total counter$/m);
    },
  );
});

describe("shutdown", () => {
  it("sends the spans still buffered before the service stops", async () => {
    const sessionId = uniqueId("last");
    await turnWithServerTool(sessionId, "Last notes");
    // No wait for the batch: the spans of this turn go out with the shutdown.
    await service.close();
    closed = true;
    expect(
      receiver.spans.filter((span) => attribute(span, "gen_ai.conversation.id") === sessionId),
    ).toHaveLength(1);
  });
});
