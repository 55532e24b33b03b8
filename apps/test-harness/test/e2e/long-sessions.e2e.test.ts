/**
 * Long sessions (docs/context-window.md) over real HTTP, on both providers: the scripted servers hold a context window of their
 * own (they count each request's context with o200k and refuse past it as the real APIs do), so "the provider is
 * never sent more than the window" is judged by the provider's side, not the service's.
 */
import {
  type AnthropicRecordedRequest,
  type AnthropicStepObject,
  anthropicStep,
  type RecordedRequest,
  type StepObject,
  step,
} from "@aptix/testing-llm-servers";
import { describe, expect, it } from "vitest";
import {
  API_KEYS,
  expectFailure,
  expectFinal,
  expectOk,
  PROVIDER_CONTEXTS,
  PROVIDERS_CATALOG,
  type ProviderId,
  resultOf,
  type SseEvent,
  streamExecute,
  toolContinuation,
  uniqueId,
  userTurn,
} from "../../src/e2e/index.js";
import { type BothProviders, setUpBothProviders } from "../support/both-providers.js";

/** What the user says in turn 1 and the summaries must carry on. */
const FACT = "the release codename is BLUE-HERON-7";
const SUMMARISE = "Summarise the conversation above";
/** A large file the client answers `read_file` with: about 1,400 tokens. */
const BIG_FILE = Array.from({ length: 200 }, (_, line) => `export const value${line} = ${line * 7};`).join(
  "\n",
);

/** The catalog with a window of `tokens` on both providers' contexts. */
const windowed = (tokens?: number) => ({
  ...PROVIDERS_CATALOG,
  conversationContexts: PROVIDERS_CATALOG.conversationContexts.map((context) => ({
    ...context,
    ...(tokens === undefined ? {} : { contextWindowTokens: tokens }),
  })),
});

/**
 * The model of both providers: a summary when asked for one (carrying the fact when its input did), a final
 * answer once the file was read, otherwise a call of `read_file`. Scripted one request at a time, for ever.
 */
function scriptedModel(providers: BothProviders) {
  let calls = 0;
  const summary = (text: string) =>
    `Goals: keep reading the files. Facts: ${text.includes(FACT) ? FACT : "none given"}.`;
  const openai = (request: RecordedRequest): StepObject => {
    providers.openai.enqueue(openai);
    const body = request.body as { input: Array<Record<string, unknown>>; previous_response_id?: string };
    const { input } = body;
    // A summary's call may continue the chain: the model reads what the provider holds, then the input.
    const held = body.previous_response_id ? providers.openai.transcript(body.previous_response_id) : [];
    const text = JSON.stringify([...held, ...input]);
    if (JSON.stringify(input).includes(SUMMARISE)) return step.text(summary(text));
    if (input.at(-1)?.type === "function_call_output") return step.text("Read it.");
    return step.functionCalls({
      name: "read_file",
      arguments: { path: "src/big.ts" },
      callId: `call_${++calls}`,
    });
  };
  const anthropic = (request: AnthropicRecordedRequest): AnthropicStepObject => {
    providers.anthropic.enqueue(anthropic);
    const messages = (request.body as { messages: Array<{ content: unknown }> }).messages;
    const text = JSON.stringify(messages);
    if (text.includes(SUMMARISE)) return anthropicStep.text(summary(text));
    if (JSON.stringify(messages.at(-1)?.content).includes('"tool_result"'))
      return anthropicStep.text("Read it.");
    return anthropicStep.toolUse({
      name: "read_file",
      input: { path: "src/big.ts" },
      id: `toolu_${++calls}`,
    });
  };
  return {
    start() {
      providers.openai.enqueue(openai);
      providers.anthropic.enqueue(anthropic);
    },
    /** Drops the one step left waiting, so the harnesses end the test with none. */
    stop() {
      providers.openai.reset();
      providers.anthropic.reset();
    },
  };
}

/** Every request the provider got: its context size as the provider counted it, whether it was refused, its body. */
function requestsOf(providers: BothProviders, provider: ProviderId) {
  const requests =
    provider === "openai" ? providers.openai.responseRequests() : providers.anthropic.messageRequests();
  return requests.map((request) => ({
    tokens: request.contextTokens ?? 0,
    refused: request.contextOverflow === true,
    body: request.rawBody,
  }));
}

async function streamed(providers: BothProviders, body: unknown) {
  const events = await (await streamExecute(providers.service.url, body, API_KEYS.alice)).readToEnd();
  return { events, result: resultOf(events) };
}

describe("a session on an 8,000-token window", () => {
  const providers = setUpBothProviders({ catalog: windowed(8_000) });

  describe.each(["openai", "anthropic"] as const)("on %s", (provider) => {
    it("runs 40 turns with a large client tool output each, all final, never past the window, the facts kept", async () => {
      providers.openai.setContextWindow(8_000);
      providers.anthropic.setContextWindow(8_000);
      const model = scriptedModel(providers);
      model.start();
      const sessionId = uniqueId(`long-${provider}`);
      const extra = { conversationContextId: PROVIDER_CONTEXTS[provider], stream: true };
      const compacted: SseEvent[] = [];
      try {
        for (let turn = 1; turn <= 40; turn++) {
          const instruction =
            turn === 1 ? `Remember: ${FACT}. Read src/big.ts.` : `Read src/big.ts again (${turn}).`;
          const first = await streamed(providers, userTurn(sessionId, `t${turn}`, instruction, extra));
          const paused = first.result.successful ? first.result.result : undefined;
          if (paused?.kind !== "client_tool_continuation")
            throw new Error(`turn ${turn}: ${JSON.stringify(first.result)}`);
          const toolCallId = paused.toolCalls[0]?.toolCallId ?? "";
          const second = await streamed(
            providers,
            toolContinuation(sessionId, `t${turn}`, [{ toolCallId, resultJson: JSON.stringify(BIG_FILE) }]),
          );
          expect(second.result).toMatchObject({
            successful: true,
            result: { kind: "final", primaryOutputText: "Read it." },
          });
          compacted.push(
            ...[...first.events, ...second.events].filter((event) => event.event === "context.compacted"),
          );
        }
        const session = expectOk(await providers.service.session(sessionId));
        expect(session.turns.map((turn) => turn.status)).toEqual(Array(40).fill("completed"));
        // Compacted, several times, each told to the stream.
        expect(session.compactions.length).toBeGreaterThanOrEqual(5);
        expect(compacted).toHaveLength(session.compactions.length);
        expect(session.compactions.every((compaction) => compaction.reason === "threshold")).toBe(true);
        expect(session.contextWindowTokens).toBe(8_000);
        // The session's usage counts the summaries' calls with the turns' (two a turn): the turns' summed.
        const turnsUsage = session.turns.map((turn) => turn.usage);
        expect(session.usage.llmCalls).toBe(
          turnsUsage.reduce((sum, usage) => sum + (usage.llmCalls ?? 0), 0),
        );
        expect(session.usage.inputTokens).toBe(turnsUsage.reduce((sum, usage) => sum + usage.inputTokens, 0));
        expect(session.usage.llmCalls).toBeGreaterThanOrEqual(80 + session.compactions.length);
        // The provider never got more than its window, and never refused a call.
        const requests = requestsOf(providers, provider);
        expect(requests.filter((request) => request.refused)).toEqual([]);
        expect(Math.max(...requests.map((request) => request.tokens))).toBeLessThanOrEqual(8_000);
        // Every request that carries a summary (the new chains) carries the fact of turn 1.
        const summarised = requests.filter(
          (request) => request.body.includes("[CONVERSATION SUMMARY]") && !request.body.includes(SUMMARISE),
        );
        expect(summarised.length).toBeGreaterThanOrEqual(session.compactions.length);
        expect(summarised.every((request) => request.body.includes("BLUE-HERON-7"))).toBe(true);
      } finally {
        model.stop();
        providers.openai.setContextWindow(undefined);
        providers.anthropic.setContextWindow(undefined);
      }
    }, 600_000);

    it("fails a turn whose own input cannot fit CONTEXT_TOO_LARGE (413), calling no model; the next turn works", async () => {
      const sessionId = uniqueId(`too-large-${provider}`);
      const extra = { conversationContextId: PROVIDER_CONTEXTS[provider] };
      const artifacts = [1, 2, 3, 4, 5].map((index) => ({
        relativePath: `src/part${index}.ts`,
        fileName: `part${index}.ts`,
        contents: BIG_FILE,
        origin: "ide",
      }));
      const before = requestsOf(providers, provider).length;
      const refused = expectFailure(
        await providers.service.post(
          userTurn(sessionId, "t1", "Read all of these", { ...extra, inputArtifacts: artifacts }),
        ),
        413,
        "CONTEXT_TOO_LARGE",
      );
      expect(refused.details).toMatchObject({ contextWindowTokens: 8_000, tokens: expect.any(Number) });
      expect(requestsOf(providers, provider)).toHaveLength(before);
      (provider === "openai" ? providers.openai : providers.anthropic).enqueue("Fine.");
      expect(
        expectFinal(await providers.service.post(userTurn(sessionId, "t2", "Just this", extra)))
          .primaryOutputText,
      ).toBe("Fine.");
    });
  });
});

describe("a session whose chain already overflows the provider's window (made before, or under a larger window)", () => {
  const providers = setUpBothProviders({ catalog: windowed() });

  describe.each(["openai", "anthropic"] as const)("on %s", (provider) => {
    it("works at its next turn: the provider's overflow compacts and the call goes again, once", async () => {
      const model = scriptedModel(providers);
      model.start();
      const sessionId = uniqueId(`overflowing-${provider}`);
      const extra = { conversationContextId: PROVIDER_CONTEXTS[provider] };
      const turn = async (id: string, instruction: string) => {
        const paused = await providers.service.post(userTurn(sessionId, id, instruction, extra));
        const body = paused.body.successful ? paused.body.result : undefined;
        if (body?.kind !== "client_tool_continuation") throw new Error(JSON.stringify(paused.body));
        const toolCallId = body.toolCalls[0]?.toolCallId ?? "";
        return expectFinal(
          await providers.service.post(
            toolContinuation(sessionId, id, [{ toolCallId, resultJson: JSON.stringify(BIG_FILE) }]),
          ),
        );
      };
      try {
        // Six turns under the model's default window: no compaction, a chain of about 9,000 tokens.
        for (let index = 1; index <= 6; index++)
          await turn(`t${index}`, index === 1 ? `Remember: ${FACT}.` : "Again.");
        const before = requestsOf(providers, provider).length;
        // Now the provider takes 6,000 tokens: the chain no longer fits.
        (provider === "openai" ? providers.openai : providers.anthropic).setContextWindow(6_000);
        expect((await turn("t7", "And once more.")).primaryOutputText).toBe("Read it.");
        const after = requestsOf(providers, provider).slice(before);
        // The refused call, the summary, then every call within the window.
        expect(after.filter((request) => request.refused)).toHaveLength(1);
        expect(after.filter((request) => !request.refused).every((request) => request.tokens <= 6_000)).toBe(
          true,
        );
        expect(after.some((request) => request.body.includes(SUMMARISE))).toBe(true);
        const session = expectOk(await providers.service.session(sessionId));
        expect(session.compactions.map((compaction) => compaction.reason)).toEqual(["overflow"]);
        // And the turn after it works without another refusal.
        await turn("t8", "Last one.");
        expect(requestsOf(providers, provider).filter((request) => request.refused)).toHaveLength(1);
      } finally {
        model.stop();
        (provider === "openai" ? providers.openai : providers.anthropic).setContextWindow(undefined);
      }
    }, 300_000);
  });
});
