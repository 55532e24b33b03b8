/**
 * What a model answers is data, over real HTTP on both stores and both providers: a U+0000 or a lone surrogate
 * (which no Postgres column keeps) in a model's text, streamed or not, in its tool-call arguments and in a
 * summary is answered, stored and sent as U+FFFD. The turn answers, the session takes its next turn at once,
 * nothing internal (a driver's message, SQL, the boot prompt) is in any answer or log line, and a tenant whose
 * model answers NUL streams beside another who loses none of their deltas.
 */
import { step } from "@aptix/testing-llm-servers";
import { describe, expect, it } from "vitest";
import {
  API_KEYS,
  BOOT_PROMPT,
  E2E_STORES,
  expectContinuation,
  expectFinal,
  expectOk,
  PROVIDER_CONTEXTS,
  type ProviderId,
  resultOf,
  type SseEvent,
  shownTextOf,
  streamExecute,
  streamTurnEvents,
  toolContinuation,
  uniqueId,
  userTurn,
} from "../../src/e2e/index.js";
import { setUpBothProviders } from "../support/both-providers.js";

/** A NUL, the halves of 📄 (U+1F4C4) apart, and a whole 📄 that must stay one. */
const DAMAGED = ["Here\u0000 it is ", "\uD83D half, ", "\uDCC4 other half, ", "whole \u{1F4C4}."];
const REPAIRED = "Here\uFFFD it is \uFFFD half, \uFFFD other half, whole \u{1F4C4}.";
/** A path with the same damage, as the model's tool-call arguments carry it. */
const DAMAGED_PATH = "src/a\u0000b\uD83D.ts";
const REPAIRED_PATH = "src/a\uFFFDb\uFFFD.ts";

/** What no answer or log line may carry: a driver's or SQL's words, the boot prompt, the damage itself. */
const INTERNALS = [/Failed query/i, /\bparams\b/i, /insert into/i, /lease_held/i, /\\u0000/, /\\ud83d/i];

function expectNothingInternal(text: string): void {
  expect(text).not.toContain("\u0000");
  for (const internal of INTERNALS) expect(text).not.toMatch(internal);
  expect(text).not.toContain(BOOT_PROMPT);
}

const PROVIDERS: ProviderId[] = ["openai", "anthropic"];

describe.each(E2E_STORES)("on %s", (store) => {
  const providers = setUpBothProviders({ store });
  const service = () => providers.service;
  const context = (provider: ProviderId) => ({ conversationContextId: PROVIDER_CONTEXTS[provider] });
  /** Every log line the service wrote, as one text. */
  const logText = () => JSON.stringify(service().logs);

  async function streamed(body: unknown, apiKey: string = API_KEYS.alice): Promise<SseEvent[]> {
    const stream = await streamExecute(service().url, body, apiKey);
    expect(stream.status).toBe(200);
    return stream.readToEnd();
  }

  for (const provider of PROVIDERS) {
    const rig = () => providers.rigs[provider];

    it(`${provider}: answers damaged text and tool arguments with U+FFFD, unstreamed, and the next turn runs at once`, async () => {
      const sessionId = uniqueId(`damaged-${provider}-${store}`);
      rig().enqueue({
        text: DAMAGED,
        toolCalls: [{ id: "call_1", name: "read_file", input: { path: DAMAGED_PATH } }],
        usage: { input: 20, output: 8 },
      });
      const paused = await service().post(userTurn(sessionId, "t1", "Read it", context(provider)));
      expectNothingInternal(JSON.stringify(paused.body));
      const continuation = expectContinuation(paused);
      expect(continuation.toolContinuationMessage).toBe(REPAIRED);
      // The arguments are JSON text: the damage, escaped there, is repaired as it is parsed.
      expect(JSON.parse(continuation.toolCalls[0]?.argumentsJson ?? "")).toEqual({ path: REPAIRED_PATH });

      rig().enqueue({ text: DAMAGED, usage: { input: 30, output: 8 } });
      const read = toolContinuation(sessionId, "t1", [{ toolCallId: "call_1", resultJson: '"export {}"' }]);
      const final = expectFinal(await service().post(read));
      expect(final.primaryOutputText).toBe(REPAIRED);

      // Not SESSION_BUSY: the session is free, and its conversation goes on with the repaired text.
      rig().enqueue({ text: ["Fine."], usage: { input: 40, output: 2 } });
      expect(
        expectFinal(await service().post(userTurn(sessionId, "t2", "Again", context(provider)))),
      ).toMatchObject({ primaryOutputText: "Fine." });
      const kept = expectOk(await service().session(sessionId));
      expect(kept.turns.map((turn) => turn.status)).toEqual(["completed", "completed"]);
      expect(expectOk(await service().trace(sessionId, "t1"))).toBeDefined();
      expectNothingInternal(logText());
    });

    it(`${provider}: streams damaged text as U+FFFD, keeps every delta, and the next turn runs at once`, async () => {
      const sessionId = uniqueId(`streamed-${provider}-${store}`);
      rig().enqueue({ text: DAMAGED, usage: { input: 20, output: 8 } });
      const events = await streamed(
        userTurn(sessionId, "t1", "Tell me", { ...context(provider), stream: true }),
      );
      expectNothingInternal(events.map((event) => event.data).join("\n"));
      expect(shownTextOf(events)).toBe(REPAIRED);
      expect(
        expectFinal({ status: 200, headers: new Headers(), body: resultOf(events) }).primaryOutputText,
      ).toBe(REPAIRED);
      // What a client resuming the turn reads is what was streamed: every delta was stored.
      const replayed = await (
        await streamTurnEvents(service().url, sessionId, "t1", {
          apiKey: API_KEYS.alice,
        })
      ).readToEnd();
      expect(shownTextOf(replayed)).toBe(REPAIRED);

      rig().enqueue({ text: ["Fine."], usage: { input: 40, output: 2 } });
      const next = await streamed(userTurn(sessionId, "t2", "Again", { ...context(provider), stream: true }));
      expect(shownTextOf(next)).toBe("Fine.");
      expectNothingInternal(logText());
    });

    it(`${provider}: keeps a damaged summary as U+FFFD, and sends it on`, async () => {
      const sessionId = uniqueId(`summary-${provider}-${store}`);
      rig().enqueue({ text: ["Hello."], usage: { input: 20, output: 2 } });
      expectFinal(await service().post(userTurn(sessionId, "t1", "Hi", context(provider))));
      rig().enqueue({ text: ["Summary\u0000 of \uD83D it."], usage: { input: 30, output: 5 } });
      const compacted = await service().send("POST", `/v1/sessions/${sessionId}/compact`);
      expectNothingInternal(JSON.stringify(compacted.body));
      expect(expectOk(compacted)).toMatchObject({ compacted: true });

      rig().enqueue({ text: ["Fine."], usage: { input: 40, output: 2 } });
      expectFinal(await service().post(userTurn(sessionId, "t2", "Again", context(provider))));
      expect(rig().rawBodies().at(-1)).toContain("Summary\uFFFD of \uFFFD it.");
      expectNothingInternal(logText());
    });
  }

  it("openai: repairs tool-call arguments whose JSON text itself holds U+0000 and a lone surrogate", async () => {
    const sessionId = uniqueId(`raw-arguments-${store}`);
    providers.openai.enqueue(
      step.functionCalls({ name: "read_file", arguments: `{"path":"${DAMAGED_PATH}"}`, callId: "call_1" }),
    );
    const paused = expectContinuation(
      await service().post(userTurn(sessionId, "t1", "Read it", context("openai"))),
    );
    expect(paused.toolCalls[0]?.argumentsJson).toBe(`{"path":"${REPAIRED_PATH}"}`);
    providers.openai.enqueue(step.text("Done."));
    const read = toolContinuation(sessionId, "t1", [{ toolCallId: "call_1", resultJson: '"export {}"' }]);
    expect(expectFinal(await service().post(read)).primaryOutputText).toBe("Done.");
    expectNothingInternal(logText());
  });

  it("streams two tenants at once, one whose model answers NUL, and loses none of the other's deltas", async () => {
    const chunks = (text: string) => Array.from({ length: 12 }, (_, index) => `${text} ${index}. `);
    const clean = chunks("Clean");
    const damaged = chunks("Damaged\u0000");
    // Each answer's chunks come apart in time, so the two turns' deltas are written while the other's are.
    providers.rigs.openai.enqueue({ text: damaged, usage: { input: 20, output: 12 }, chunkDelayMs: 15 });
    providers.rigs.anthropic.enqueue({ text: clean, usage: { input: 20, output: 12 }, chunkDelayMs: 15 });
    const [aliceSession, bobSession] = [uniqueId(`alice-${store}`), uniqueId(`bob-${store}`)];
    const [aliceEvents, bobEvents] = await Promise.all([
      streamed(
        userTurn(aliceSession, "t1", "Damage", { ...context("openai"), stream: true }),
        API_KEYS.alice,
      ),
      streamed(userTurn(bobSession, "t1", "Clean", { ...context("anthropic"), stream: true }), API_KEYS.bob),
    ]);
    expect(shownTextOf(aliceEvents)).toBe(damaged.join("").replaceAll("\u0000", "\uFFFD"));
    expect(shownTextOf(bobEvents)).toBe(clean.join(""));
    // Bob's stored deltas, as a client resuming his turn reads them: all of them, in order.
    const replayed = await (
      await streamTurnEvents(service().url, bobSession, "t1", {
        apiKey: API_KEYS.bob,
      })
    ).readToEnd();
    expect(replayed.filter((event) => event.event === "output_text.delta").map((event) => event.id)).toEqual(
      bobEvents.filter((event) => event.event === "output_text.delta").map((event) => event.id),
    );
    expect(shownTextOf(replayed)).toBe(clean.join(""));
    expectNothingInternal(logText());
  });
});
