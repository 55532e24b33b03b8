/**
 * Provider parity over real HTTP: one provider-neutral scenario (./scenarios/parity-scenario.ts) is scripted
 * on the OpenAI harness and on the Anthropic harness and run four times, {openai, anthropic} × {JSON, event
 * stream}, against the real server (`startServer`, both real provider adapters, PGlite). The four sequences of
 * AgentExecuteResponses (for streams, the `result` event's InvokeResult) must be identical, field for field.
 *
 * Each run is its own principal with the same session id (sessions are scoped by principal), so even
 * `sessionId` matches. The only server-measured value in an answer, a server tool's `executionMs`, is made
 * deterministic by letting `Date` advance only between macrotasks (fake `Date`, real timers): a synchronous
 * tool like `agent_change_mode` then always measures 0 ms.
 */
import { type AgentExecuteResponse, AgentExecuteResultSchema, type InvokeResult } from "@aptix/contracts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  deltasOf,
  PROVIDER_CONTEXTS,
  type ProviderId,
  REVIEW_INSTRUCTIONS,
  REVIEW_WELCOME,
  resultOf,
  type SessionSummaryJson,
  type SseEvent,
  shownTextOf,
  streamExecute,
  uniqueId,
} from "../../src/e2e/index.js";
import { setUpBothProviders } from "../support/both-providers.js";
import { PARITY_SCENARIO, type ParityStep, parityBody } from "./scenarios/parity-scenario.js";

type Transport = "json" | "stream";
const RUNS: Array<{ provider: ProviderId; transport: Transport }> = [
  { provider: "openai", transport: "json" },
  { provider: "openai", transport: "stream" },
  { provider: "anthropic", transport: "json" },
  { provider: "anthropic", transport: "stream" },
];
const runName = (run: { provider: ProviderId; transport: Transport }) => `${run.provider}-${run.transport}`;
/** One principal per run: `<run>:<key>`. */
const KEYS = Object.fromEntries(RUNS.map((run) => [runName(run), `${runName(run)}-parity-key-0123456789`]));
/** The same session id in every run (each run is another principal). */
const SESSION_ID = uniqueId("parity");

const providers = setUpBothProviders({
  env: {
    APTIX_API_KEYS: Object.entries(KEYS)
      .map(([principal, key]) => `${principal}:${key}`)
      .join(","),
  },
});
const { rigs } = providers;
const serviceUrl = () => providers.service.url;

// After the service started (its hooks run first), before it closes (after hooks run in reverse).
beforeAll(() => {
  vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true, advanceTimeDelta: 5 });
});
afterAll(() => {
  vi.useRealTimers();
});

interface Answer {
  status: number;
  contentType: string;
  body: InvokeResult<AgentExecuteResponse>;
  /** Streams only. */
  events?: SseEvent[];
}

async function postJson(body: unknown, apiKey: string): Promise<Answer> {
  const url = serviceUrl();
  const response = await fetch(`${url}/v1/agent/execute`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const parsed: unknown = await response.json();
  const checked = AgentExecuteResultSchema.safeParse(parsed);
  if (!checked.success) throw new Error(`not InvokeResult<AgentExecuteResponse>: ${JSON.stringify(parsed)}`);
  return {
    status: response.status,
    contentType: response.headers.get("content-type") ?? "",
    body: parsed as InvokeResult<AgentExecuteResponse>,
  };
}

async function postStream(body: unknown, apiKey: string): Promise<Answer> {
  const stream = await streamExecute(serviceUrl(), body, apiKey);
  const events = await stream.readToEnd();
  return {
    status: stream.status,
    contentType: stream.headers.get("content-type") ?? "",
    body: resultOf(events),
    events,
  };
}

const runs = new Map<string, Answer[]>();

/** Scripts the whole scenario on the run's provider and sends its requests one after another. */
async function runScenario(provider: ProviderId, transport: Transport): Promise<Answer[]> {
  const rig = rigs[provider];
  const apiKey = KEYS[`${provider}-${transport}`] ?? "";
  const answers: Answer[] = [];
  for (const step of PARITY_SCENARIO) {
    rig.enqueue(...step.model);
    const body = parityBody(step, SESSION_ID, PROVIDER_CONTEXTS[provider], transport === "stream");
    answers.push(transport === "stream" ? await postStream(body, apiKey) : await postJson(body, apiKey));
  }
  return answers;
}

/** The round a step's events belong to: 0 for a user turn, then one more per continuation of that turn. */
function roundsOf(steps: readonly ParityStep[]): number[] {
  const seen = new Map<string, number>();
  return steps.map((step) => {
    const round = step.request.kind === "user" ? 0 : (seen.get(step.request.turnId) ?? 0) + 1;
    seen.set(step.request.turnId, round);
    return round;
  });
}

const usage = (input: number, output: number, llmCalls: number) => ({
  inputTokens: input,
  outputTokens: output,
  totalTokens: input + output,
  llmCalls,
  cachedInputTokens: 0,
  reasoningTokens: 0,
});

/** What the scenario must answer, written out by hand from the script. */
const EXPECTED: Array<InvokeResult<AgentExecuteResponse>> = [
  {
    successful: true,
    errors: [],
    warnings: [],
    result: {
      kind: "client_tool_continuation",
      sessionId: SESSION_ID,
      turnId: "t1",
      modeDisplayName: "General",
      toolCalls: [
        { toolCallId: "call_parity_read_1", name: "read_file", argumentsJson: '{"path":"src/app.ts"}' },
      ],
      toolContinuationMessage: "Let me read the file.",
    },
  },
  {
    successful: true,
    errors: [],
    warnings: [],
    result: {
      kind: "final",
      sessionId: SESSION_ID,
      turnId: "t1",
      modeDisplayName: "General",
      primaryOutputText: "It exports one function, `app`.",
      usage: usage(120 + 160, 18 + 9, 2),
    },
  },
  {
    successful: true,
    errors: [],
    warnings: [],
    result: {
      kind: "final",
      sessionId: SESSION_ID,
      turnId: "t2",
      modeDisplayName: "Code Review",
      primaryOutputText: `${REVIEW_WELCOME}\n\nReviewing src/app.ts now.`,
      toolResults: [
        {
          toolCallId: "call_parity_mode_1",
          name: "agent_change_mode",
          executionMs: 0,
          resultJson: JSON.stringify({
            mode: "review",
            displayName: "Code Review",
            instructions: REVIEW_INSTRUCTIONS,
            reason: "The user asked for a code review.",
            branch: false,
          }),
        },
      ],
      usage: usage(190 + 260, 25 + 6, 2),
    },
  },
  {
    successful: true,
    errors: [],
    warnings: [],
    result: {
      kind: "client_tool_continuation",
      sessionId: SESSION_ID,
      turnId: "t3",
      modeDisplayName: "Code Review",
      toolCalls: [
        { toolCallId: "call_parity_read_2", name: "read_file", argumentsJson: '{"path":"src/util.ts"}' },
        {
          toolCallId: "call_parity_submit_1",
          name: "submit_review",
          argumentsJson: '{"summary":"app.ts is fine; util.ts is missing.","approve":false}',
        },
      ],
    },
  },
  {
    successful: true,
    errors: [],
    warnings: [],
    result: {
      kind: "final",
      sessionId: SESSION_ID,
      turnId: "t3",
      modeDisplayName: "Code Review",
      primaryOutputText: "src/util.ts does not exist; the review is submitted.",
      usage: usage(300 + 380, 40 + 12, 2),
    },
  },
  {
    successful: true,
    errors: [],
    warnings: [],
    result: {
      kind: "final",
      sessionId: SESSION_ID,
      turnId: "t4",
      modeDisplayName: "Code Review",
      primaryOutputText: "You're welcome.",
      usage: usage(410, 3, 1),
    },
  },
];

describe("the same conversation on OpenAI and on Anthropic, as JSON and as event streams", () => {
  it.each(RUNS)("runs the scenario on $provider as $transport", async ({ provider, transport }) => {
    const answers = await runScenario(provider, transport);
    runs.set(`${provider}-${transport}`, answers);

    expect(answers.map((answer) => answer.status)).toEqual(PARITY_SCENARIO.map(() => 200));
    // Continuations of a streamed turn stream too, though they carry no stream flag.
    const mediaType = transport === "stream" ? "text/event-stream" : "application/json";
    for (const answer of answers) expect(answer.contentType).toContain(mediaType);
    expect(answers.map((answer) => answer.body)).toStrictEqual(EXPECTED);

    // The provider got one request per scripted model answer, streamed exactly when the client streamed.
    const rig = rigs[provider];
    const modelCalls = PARITY_SCENARIO.reduce((sum, step) => sum + step.model.length, 0);
    expect(rig.requestCount()).toBe(modelCalls);
    const streamed = rig.rawBodies().map((raw) => (JSON.parse(raw) as { stream?: boolean }).stream === true);
    expect(streamed).toEqual(streamed.map(() => transport === "stream"));

    if (transport === "stream") {
      const rounds = roundsOf(PARITY_SCENARIO);
      PARITY_SCENARIO.forEach((step, index) => {
        const events = answers[index]?.events ?? [];
        const round = rounds[index];
        // Every chunk the model streamed arrives as its own delta, in order; what a client shows at the end
        // (the deltas since the last reset, a mode change's welcome included) is the round's answer.
        const chunks = step.model.flatMap((turn) => turn.text ?? []);
        expect(deltasOf(events).filter((delta) => chunks.includes(delta))).toEqual(chunks);
        const answer = resultOf(events);
        const response = answer.successful ? answer.result : undefined;
        expect(shownTextOf(events)).toBe(
          response?.kind === "final" ? response.primaryOutputText : (response?.toolContinuationMessage ?? ""),
        );
        const ids = events.map((event) => event.id);
        expect(ids).toEqual([...ids.slice(0, -1).map((_id, seq) => `${round}-${seq}`), `${round}-result`]);
      });
    }

    const summary = (await (
      await fetch(`${serviceUrl()}/v1/sessions/${SESSION_ID}`, {
        headers: { authorization: `Bearer ${KEYS[`${provider}-${transport}`]}` },
      })
    ).json()) as InvokeResult<SessionSummaryJson>;
    expect(summary.successful).toBe(true);
    if (!summary.successful) return;
    expect(summary.result).toMatchObject({
      sessionId: SESSION_ID,
      conversationContextId: PROVIDER_CONTEXTS[provider],
      mode: "review",
    });
    expect(summary.result.modeHistory.map((entry) => [entry.previousMode, entry.newMode])).toEqual([
      ["general", "review"],
    ]);
    expect(summary.result.turns.map((turn) => [turn.turnId, turn.status])).toEqual([
      ["t1", "completed"],
      ["t2", "completed"],
      ["t3", "completed"],
      ["t4", "completed"],
    ]);
  });

  it("gives the identical AgentExecuteResponse sequence in all four runs", () => {
    expect([...runs.keys()]).toEqual(RUNS.map(runName));
    const [reference, ...others] = RUNS.map((run) => runs.get(runName(run))?.map((answer) => answer.body));
    expect(reference).toHaveLength(PARITY_SCENARIO.length);
    for (const other of others) expect(other).toStrictEqual(reference);
    // Streams also agree on the deltas they sent, chunk for chunk, and on the event ids.
    const streamed = (provider: ProviderId) =>
      runs.get(`${provider}-stream`)?.map((answer) => answer.events?.map((event) => [event.id, event.data]));
    expect(streamed("anthropic")).toStrictEqual(streamed("openai"));
  });
});
