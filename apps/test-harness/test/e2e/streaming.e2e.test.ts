/**
 * Streaming over real HTTP, on both providers: the real server (`startServer`, both real adapters, PGlite)
 * answers `stream: true` with `text/event-stream`, read here incrementally with a `fetch` body reader while the
 * scripted provider is still writing its chunks. Covers reading deltas as they arrive, dropping off mid-turn
 * and resuming with `Last-Event-ID`, a provider failing mid-stream, the continuation of a streamed turn, and
 * heartbeat comments on an idle stream (`APTIX_SSE_HEARTBEAT_MS=100`).
 */

import { describe, expect, it } from "vitest";
import {
  API_KEYS,
  comparableEvents,
  deltasOf,
  expectOk,
  PROVIDER_CONTEXTS,
  type ProviderId,
  resultOf,
  type SseEvent,
  streamExecute,
  streamTurnEvents,
  toolContinuation,
  uniqueId,
  waitFor,
} from "../../src/e2e/index.js";
import { setUpBothProviders } from "../support/both-providers.js";

const HEARTBEAT_MS = 100;
const apiKey = API_KEYS.alice;

const providers = setUpBothProviders({ env: { APTIX_SSE_HEARTBEAT_MS: String(HEARTBEAT_MS) } });
const { rigs } = providers;
const service = () => providers.service;

const ids = (events: readonly SseEvent[]) => events.map((event) => event.id);

describe.each(["openai", "anthropic"] as const)("%s", (provider: ProviderId) => {
  const rig = () => rigs[provider];
  const userTurn = (sessionId: string, turnId: string, instruction: string) => ({
    sessionId,
    turnId,
    instruction,
    conversationContextId: PROVIDER_CONTEXTS[provider],
    stream: true,
  });
  const turnStatus = async (sessionId: string, turnId: string) =>
    expectOk(await service().session(sessionId)).turns.find((turn) => turn.turnId === turnId)?.status;

  it("delivers deltas while the provider still streams, and a client that drops off mid-turn resumes with Last-Event-ID, getting every remaining event once", async () => {
    const sessionId = uniqueId(`resume-${provider}`);
    const chunks = ["Streams ", "arrive ", "piece ", "by ", "piece, ", "even ", "after ", "a disconnect."];
    const text = chunks.join("");
    rig().enqueue({ text: chunks, chunkDelayMs: 120, usage: { input: 50, output: 8 } });

    const stream = await streamExecute(service().url, userTurn(sessionId, "t1", "Stream to me."), apiKey);
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toContain("text/event-stream");

    const first = await stream.next();
    // When the first delta reached the client, the provider had not written its last chunk yet.
    const writtenAtFirst = rig().textChunksWritten(0);
    expect(first).toMatchObject({ id: "0-0", event: "output_text.delta" });
    expect(JSON.parse(first?.data ?? "{}")).toEqual({ delta: chunks[0] });
    expect(writtenAtFirst).toBeGreaterThanOrEqual(1);
    expect(writtenAtFirst).toBeLessThan(chunks.length);
    expect(rig().answerFinished(0)).toBe(false);

    const second = await stream.next();
    expect(second).toMatchObject({ id: "0-1", event: "output_text.delta" });
    // Drop off mid-turn: the provider is still streaming, and the turn is still running.
    stream.abort();
    const before = [...stream.events];
    const lastSeen = before.at(-1)?.id ?? "";
    expect(rig().textChunksWritten(0)).toBeLessThan(chunks.length);
    expect(await turnStatus(sessionId, "t1")).toBe("running");

    // Reconnect at once, while the turn runs: the events route replays what was missed and follows it live.
    const resumed = await streamTurnEvents(service().url, sessionId, "t1", { apiKey, lastEventId: lastSeen });
    expect(resumed.headers.get("content-type")).toContain("text/event-stream");
    const after = await resumed.readToEnd();

    // The turn was not cancelled by the disconnect: the provider finished its answer and the turn is stored.
    await waitFor(() => rig().answerFinished(0), "the provider to finish its answer");
    expect(await turnStatus(sessionId, "t1")).toBe("completed");

    // The whole sequence, once more from the start, is exactly what the client got before and after.
    const full = await (await streamTurnEvents(service().url, sessionId, "t1", { apiKey })).readToEnd();
    const expectedIds = [...chunks.map((_chunk, seq) => `0-${seq}`), "0-result"];
    expect(ids(full)).toEqual(expectedIds);
    expect(comparableEvents([...before, ...after])).toEqual(comparableEvents(full));
    expect(new Set(ids([...before, ...after])).size).toBe(expectedIds.length);
    expect(after.filter((event) => event.event === "result")).toHaveLength(1);
    expect(deltasOf(full)).toEqual(chunks);

    const result = resultOf(full);
    expect(result).toEqual({
      successful: true,
      errors: [],
      warnings: [],
      result: {
        kind: "final",
        sessionId,
        turnId: "t1",
        modeDisplayName: "General",
        primaryOutputText: text,
        usage: {
          inputTokens: 50,
          outputTokens: 8,
          totalTokens: 58,
          llmCalls: 1,
          cachedInputTokens: 0,
          reasoningTokens: 0,
        },
      },
    });
    // Resuming again after the end gives the same remainder; resuming after the result gives the result again,
    // the turn's authoritative end.
    const later = await streamTurnEvents(service().url, sessionId, "t1", { apiKey, lastEventId: lastSeen });
    expect(comparableEvents(await later.readToEnd())).toEqual(comparableEvents(after));
    const done = await streamTurnEvents(service().url, sessionId, "t1", { apiKey, lastEventId: "0-result" });
    expect(comparableEvents(await done.readToEnd())).toEqual(comparableEvents(full.slice(-1)));
  });

  it("ends the stream with an unsuccessful result event when the provider fails mid-stream", async () => {
    const sessionId = uniqueId(`broken-${provider}`);
    rig().enqueue({
      text: ["This ", "answer ", "breaks ", "off ", "here."],
      breakAfterChunks: 2,
      usage: { input: 40, output: 5 },
    });

    const stream = await streamExecute(service().url, userTurn(sessionId, "t1", "Go on."), apiKey);
    // The stream had begun (200) before the failure.
    expect(stream.status).toBe(200);
    const events = await stream.readToEnd();
    expect(deltasOf(events)).toEqual(["This ", "answer "]);
    expect(ids(events)).toEqual(["0-0", "0-1", "0-result"]);
    const result = resultOf(events);
    expect(result.successful).toBe(false);
    if (result.successful) return;
    expect("result" in result).toBe(false);
    expect(result.errors[0]).toMatchObject({ code: "PROVIDER_ERROR", details: { provider } });
    if (provider === "anthropic")
      expect(result.errors[0]?.details).toMatchObject({ type: "overloaded_error" });

    expect(await turnStatus(sessionId, "t1")).toBe("failed");
    // The events route tells a reconnecting client the same.
    const replayed = await (await streamTurnEvents(service().url, sessionId, "t1", { apiKey })).readToEnd();
    expect(comparableEvents(replayed)).toEqual(comparableEvents(events));
  });

  it("answers the tool continuation of a streamed turn as an event stream of the next round", async () => {
    const sessionId = uniqueId(`continued-${provider}`);
    rig().enqueue(
      {
        text: ["Let me ", "look."],
        toolCalls: [{ id: `call_stream_${provider}_1`, name: "read_file", input: { path: "a.ts" } }],
        usage: { input: 30, output: 10 },
      },
      { text: ["a.ts ", "is ", "empty."], usage: { input: 60, output: 4 } },
    );

    const first = await (
      await streamExecute(service().url, userTurn(sessionId, "t1", "What is in a.ts?"), apiKey)
    ).readToEnd();
    expect(ids(first)).toEqual(["0-0", "0-1", "0-result"]);
    expect(resultOf(first)).toMatchObject({
      successful: true,
      result: {
        kind: "client_tool_continuation",
        toolCalls: [{ toolCallId: `call_stream_${provider}_1`, name: "read_file" }],
        toolContinuationMessage: "Let me look.",
      },
    });

    // No stream flag (a continuation may not carry one): it streams because its user turn did.
    const continuation = toolContinuation(sessionId, "t1", [
      { toolCallId: `call_stream_${provider}_1`, resultJson: '""' },
    ]);
    expect(continuation).not.toHaveProperty("stream");
    const second = await streamExecute(service().url, continuation, apiKey);
    expect(second.headers.get("content-type")).toContain("text/event-stream");
    const events = await second.readToEnd();
    expect(ids(events)).toEqual(["1-0", "1-1", "1-2", "1-result"]);
    expect(deltasOf(events).join("")).toBe("a.ts is empty.");
    expect(resultOf(events)).toMatchObject({
      successful: true,
      result: { kind: "final", turnId: "t1", primaryOutputText: "a.ts is empty.", usage: { llmCalls: 2 } },
    });

    // The events route follows the turn through both rounds; after round 0's result it gives round 1 only.
    const whole = await (await streamTurnEvents(service().url, sessionId, "t1", { apiKey })).readToEnd();
    expect(comparableEvents(whole)).toEqual(comparableEvents([...first, ...events]));
    const fromRound1 = await (
      await streamTurnEvents(service().url, sessionId, "t1", { apiKey, lastEventId: "0-result" })
    ).readToEnd();
    expect(comparableEvents(fromRound1)).toEqual(comparableEvents(events));
  });

  it("replays a stored answer (its text as a delta before its result when streamed), marked Idempotent-Replayed", async () => {
    const sessionId = uniqueId(`again-${provider}`);
    rig().enqueue(
      {
        text: ["Let me ", "look."],
        toolCalls: [{ id: `call_again_${provider}_1`, name: "read_file", input: { path: "a.ts" } }],
        usage: { input: 30, output: 10 },
      },
      { text: ["a.ts ", "is ", "empty."], usage: { input: 60, output: 4 } },
    );
    // Answered without streaming first: its events were never logged.
    const plainTurn = { ...userTurn(sessionId, "t1", "What is in a.ts?"), stream: false };
    const pausedAnswer = await service().post(plainTurn);
    expect(pausedAnswer.headers.get("idempotent-replayed")).toBeNull();
    const paused = expectOk(pausedAnswer);
    expect(paused).toMatchObject({
      kind: "client_tool_continuation",
      toolContinuationMessage: "Let me look.",
    });
    const continuation = toolContinuation(sessionId, "t1", [
      { toolCallId: `call_again_${provider}_1`, resultJson: '""' },
    ]);
    const finalAnswer = await service().post(continuation);
    expect(finalAnswer.headers.get("idempotent-replayed")).toBeNull();
    const final = expectOk(finalAnswer);
    expect(final).toMatchObject({ kind: "final", primaryOutputText: "a.ts is empty." });

    // The user turn and the continuation sent again as JSON: their stored answers, said to be replays.
    const turnAgain = await service().post(plainTurn);
    expect([turnAgain.headers.get("idempotent-replayed"), expectOk(turnAgain)]).toEqual(["true", paused]);
    const continuationAgain = await service().post(continuation);
    expect([continuationAgain.headers.get("idempotent-replayed"), expectOk(continuationAgain)]).toEqual([
      "true",
      final,
    ]);

    // The user turn sent again as a stream: the stored continuation message as a delta, then the stored result.
    const againStream = await streamExecute(
      service().url,
      userTurn(sessionId, "t1", "What is in a.ts?"),
      apiKey,
    );
    expect(againStream.headers.get("idempotent-replayed")).toBe("true");
    const again = await againStream.readToEnd();
    expect(ids(again)).toEqual(["0-999999999", "0-result"]);
    expect(deltasOf(again).join("")).toBe("Let me look.");
    expect(resultOf(again)).toEqual({ successful: true, result: paused, errors: [], warnings: [] });

    // A streamed turn's continuation sent again: the final answer's text, then its result; no provider call.
    const streamed = uniqueId(`again-streamed-${provider}`);
    rig().enqueue({ text: ["Hello ", "there."], usage: { input: 10, output: 2 } });
    const firstStream = await streamExecute(service().url, userTurn(streamed, "t1", "Hi"), apiKey);
    expect(firstStream.headers.get("idempotent-replayed")).toBeNull();
    const first = await firstStream.readToEnd();
    expect(ids(first)).toEqual(["0-0", "0-1", "0-result"]);
    const secondStream = await streamExecute(service().url, userTurn(streamed, "t1", "Hi"), apiKey);
    expect(secondStream.headers.get("idempotent-replayed")).toBe("true");
    const second = await secondStream.readToEnd();
    expect(ids(second)).toEqual(["0-999999999", "0-result"]);
    expect(deltasOf(second).join("")).toBe("Hello there.");
    expect(resultOf(second)).toEqual(resultOf(first));

    // A client that drops off after the replayed delta resumes with the result alone.
    const resumed = await (
      await streamTurnEvents(service().url, streamed, "t1", { apiKey, lastEventId: "0-999999999" })
    ).readToEnd();
    expect(ids(resumed)).toEqual(["0-result"]);
  });

  it("sends heartbeat comments while the provider is slow to answer", async () => {
    const sessionId = uniqueId(`heartbeat-${provider}`);
    const delayMs = 8 * HEARTBEAT_MS;
    rig().enqueue({ text: ["Sorry, ", "slow day."], delayMs, usage: { input: 20, output: 3 } });

    const stream = await streamExecute(service().url, userTurn(sessionId, "t1", "Hello?"), apiKey);
    const events = await stream.readToEnd();
    expect(ids(events)).toEqual(["0-0", "0-1", "0-result"]);
    const idle = stream.comments.filter((comment) => comment.afterEvents === 0);
    // About one per interval while nothing else was sent (timers may coalesce: at least half of them).
    expect(idle.length).toBeGreaterThanOrEqual(delayMs / HEARTBEAT_MS / 2);
    expect(new Set(idle.map((comment) => comment.text))).toEqual(new Set(["keep-alive"]));
    const firstEventAt = events[0]?.receivedAt ?? 0;
    expect(idle.every((comment) => comment.receivedAt <= firstEventAt)).toBe(true);
    expect(resultOf(events)).toMatchObject({
      successful: true,
      result: { primaryOutputText: "Sorry, slow day." },
    });
  });
});
