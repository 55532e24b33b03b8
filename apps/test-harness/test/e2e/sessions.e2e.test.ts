/**
 * Sessions users manage, over real HTTP on both stores (docs/http-api.md, Sessions): the list (paging,
 * newest first, principal isolation), the messages of a turn with a client tool round trip, delete (everything
 * of the session 404 afterwards, 409 while a turn runs, another principal's id deletes nothing) and cancel (the
 * waiting request answers TURN_CANCELLED, the provider continues from the turn before, cancelling twice is the
 * same), and on Postgres a cancel sent to a second instance stopping the first instance's provider call.
 */
import type { AgentExecuteResponse, SessionList, SessionMessages, TurnSummary } from "@aptix/contracts";
import type { Jsonified } from "@aptix/server";
import { type ScriptedOpenAI, startScriptedOpenAI, step } from "@aptix/testing-llm-servers";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  API_KEYS,
  checkAndResetHarness,
  E2E_STORES,
  expectContinuation,
  expectFailure,
  expectFinal,
  expectOk,
  type HttpAnswer,
  postgresDriver,
  resultOf,
  type ServiceClient,
  shownTextOf,
  startTestService,
  streamExecute,
  streamTurnEvents,
  type TestService,
  type TestStoreKind,
  toolContinuation,
  uniqueId,
  userTurn,
  waitFor,
} from "../../src/e2e/index.js";
import { useTwoInstances } from "../support/two-instances.js";

/** A provider answer held far longer than any test runs: it ends only when its caller goes away. */
const HELD = step.text("Never delivered.", { delayMs: 120_000 });

type ListJson = Jsonified<SessionList>;
type MessagesJson = Jsonified<SessionMessages>;
type TurnJson = Jsonified<TurnSummary>;

let harness: ScriptedOpenAI;

beforeAll(async () => {
  harness = await startScriptedOpenAI();
});

afterAll(async () => {
  await harness?.close();
});

afterEach(() => {
  checkAndResetHarness(harness);
});

const cancel = (client: ServiceClient, sessionId: string, turnId: string, as: "alice" | "bob" = "alice") =>
  client.send<TurnJson>("POST", `/v1/sessions/${sessionId}/turns/${turnId}/cancel`, undefined, as);

/**
 * Starts a turn whose provider call is held, and answers once the harness holds the call, with the request's
 * answer still to come (wrapped: an async function's promise would wait for it).
 */
async function heldTurn(
  client: ServiceClient,
  body: Record<string, unknown>,
): Promise<{ answer: Promise<HttpAnswer<AgentExecuteResponse>> }> {
  const before = harness.responseRequests().length;
  harness.enqueue(HELD);
  const answer = client.post(body);
  await waitFor(() => harness.responseRequests().length > before, "the held provider call");
  return { answer };
}

/** The `previous_response_id` of the provider's last request. */
function lastPreviousResponseId(): unknown {
  const body = harness.responseRequests().at(-1)?.body as { previous_response_id?: unknown } | undefined;
  return body?.previous_response_id;
}

describe.each(E2E_STORES)("%s store", (store: TestStoreKind) => {
  let service: TestService | undefined;
  const client = (): TestService => {
    if (!service) throw new Error("the service did not start");
    return service;
  };

  beforeAll(async () => {
    service = await startTestService({ store, harness });
  });

  afterAll(async () => {
    await service?.close();
  });

  it("lists the principal's sessions newest first, a page at a time, and never another principal's", async () => {
    const prefix = uniqueId("list");
    const ids = [`${prefix}-a`, `${prefix}-b`, `${prefix}-c`];
    const workspaceId = uniqueId("ws");
    for (const [index, sessionId] of ids.entries()) {
      harness.enqueue(`Answer ${index}.`);
      const long = `${"x".repeat(78)}   and more past eighty`;
      const instruction = index === 2 ? long : `Session ${index}`;
      expectFinal(
        await client().post(userTurn(sessionId, "t1", instruction, index === 1 ? { workspaceId } : {})),
      );
    }
    harness.enqueue("Bob's answer.");
    expectFinal(await client().post(userTurn(`${prefix}-bob`, "t1", "Bob's own"), "bob"));

    const first = expectOk(await client().get<ListJson>("/v1/sessions?limit=2"));
    expect(first.sessions.map((session) => session.sessionId)).toEqual([ids[2], ids[1]]);
    expect(first.sessions[0]).toMatchObject({
      modeDisplayName: "General",
      turnCount: 1,
      lastTurnStatus: "completed",
      // The first 80 UTF-16 code units end in spaces, which are trimmed.
      title: "x".repeat(78),
    });
    expect(first.sessions[1]).toMatchObject({ workspaceId, title: "Session 1" });
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = expectOk(
      await client().get<ListJson>(
        `/v1/sessions?limit=2&cursor=${encodeURIComponent(first.nextCursor ?? "")}`,
      ),
    );
    const seen = second.sessions.map((session) => session.sessionId);
    expect(seen[0]).toBe(ids[0]);
    expect(seen).not.toContain(`${prefix}-bob`);

    const filtered = expectOk(await client().get<ListJson>(`/v1/sessions?workspaceId=${workspaceId}`));
    expect(filtered).toEqual({ sessions: [first.sessions[1]] });
    const bobs = expectOk(await client().get<ListJson>("/v1/sessions?limit=100", "bob"));
    expect(bobs.sessions.map((session) => session.sessionId)).toContain(`${prefix}-bob`);
    expect(bobs.sessions.map((session) => session.sessionId)).not.toContain(ids[0]);

    for (const [query, field] of [
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=ten", "limit"],
      ["cursor=nonsense", "cursor"],
      // Digits that name no time a session can have: refused, not a database error.
      ["cursor=999999999999999.x", "cursor"],
      // An id part no session id can be: a NUL the store cannot even compare, a space, nothing.
      ["cursor=1.%00x", "cursor"],
      ["cursor=1.a%20b", "cursor"],
      ["cursor=1.", "cursor"],
      [`cursor=1.${"a".repeat(200)}`, "cursor"],
      ["order=asc", "order"],
    ] as const) {
      const refused = expectFailure(await client().get(`/v1/sessions?${query}`), 400, "VALIDATION_FAILED");
      expect(refused.details?.fields).toEqual([expect.objectContaining({ path: field })]);
    }
  });

  it("searches the titles in the store, ignoring case, a page of matches at a time, and refuses a bad `q`", async () => {
    const tag = uniqueId("needle");
    const instructions = [`Find ${tag} here`, "Nothing to see", `FIND ${tag.toUpperCase()} again`];
    const ids = instructions.map((_, index) => `${tag}-${index}`);
    for (const [index, instruction] of instructions.entries()) {
      harness.enqueue(`Answer ${index}.`);
      expectFinal(await client().post(userTurn(ids[index] as string, "t1", instruction)));
    }
    const query = `q=${encodeURIComponent(tag)}&limit=1`;
    const first = expectOk(await client().get<ListJson>(`/v1/sessions?${query}`));
    expect(first.sessions.map((session) => session.sessionId)).toEqual([ids[2]]);
    const second = expectOk(
      await client().get<ListJson>(
        `/v1/sessions?${query}&cursor=${encodeURIComponent(first.nextCursor ?? "")}`,
      ),
    );
    // The non-matching session between them is skipped, and the last match ends the search.
    expect(second.sessions.map((session) => session.sessionId)).toEqual([ids[0]]);
    expect(second.nextCursor).toBeUndefined();
    expect(
      expectOk(await client().get<ListJson>(`/v1/sessions?q=${encodeURIComponent(tag)}`, "bob")),
    ).toEqual({
      sessions: [],
    });
    for (const q of ["", "x".repeat(81)]) {
      const refused = expectFailure(await client().get(`/v1/sessions?q=${q}`), 400, "VALIDATION_FAILED");
      expect(refused.details?.fields).toEqual([expect.objectContaining({ path: "q" })]);
    }
  });

  it("reads a turn with a client tool round trip back as a user and an assistant message with its tool call", async () => {
    const sessionId = uniqueId("messages");
    harness.enqueue(
      step.functionCalls({ name: "read_file", arguments: { path: "src/a.ts" }, callId: "call_1" }),
    );
    const paused = expectContinuation(await client().post(userTurn(sessionId, "t1", "What is in src/a.ts?")));
    harness.enqueue("It exports a.");
    const toolCallId = paused.toolCalls[0]?.toolCallId ?? "";
    expectFinal(
      await client().post(
        toolContinuation(sessionId, "t1", [{ toolCallId, resultJson: '"export const a = 1;"' }]),
      ),
    );
    harness.enqueue(step.error(500));
    await client().post(userTurn(sessionId, "t2", "And now?"));

    const read = expectOk(await client().get<MessagesJson>(`/v1/sessions/${sessionId}/messages`));
    expect(read.nextCursor).toBeUndefined();
    expect(read.messages.map(({ createdAt: _c, ...message }) => message)).toEqual([
      { turnId: "t1", role: "user", text: "What is in src/a.ts?" },
      {
        turnId: "t1",
        role: "assistant",
        text: "It exports a.",
        toolCalls: [
          { name: "read_file", argumentsJson: '{"path":"src/a.ts"}', resultJson: '"export const a = 1;"' },
        ],
      },
      { turnId: "t2", role: "user", text: "And now?" },
      { turnId: "t2", role: "assistant", error: { code: "PROVIDER_ERROR", message: expect.any(String) } },
    ]);

    const page1 = expectOk(await client().get<MessagesJson>(`/v1/sessions/${sessionId}/messages?limit=3`));
    expect(page1.messages).toEqual(read.messages.slice(0, 3));
    const page2 = expectOk(
      await client().get<MessagesJson>(
        `/v1/sessions/${sessionId}/messages?limit=3&cursor=${page1.nextCursor}`,
      ),
    );
    expect(page2).toEqual({ messages: read.messages.slice(3) });

    expectFailure(await client().get(`/v1/sessions/${sessionId}/messages`, "bob"), 404, "SESSION_NOT_FOUND");
    expectFailure(
      await client().get(`/v1/sessions/${sessionId}/messages?limit=-1`),
      400,
      "VALIDATION_FAILED",
    );
  });

  it("deletes a session with everything of it, refuses while a turn runs, and deletes nothing of another principal", async () => {
    const sessionId = uniqueId("delete");
    harness.enqueue(step.text("Streamed.", { usage: { input_tokens: 5, output_tokens: 2 } }));
    expectFinal(await client().post(userTurn(sessionId, "t1", "Hello.", { stream: false })));

    expectFailure(
      await client().send("DELETE", `/v1/sessions/${sessionId}`, undefined, "bob"),
      404,
      "SESSION_NOT_FOUND",
    );
    expectOk(await client().session(sessionId));

    const { answer: waiting } = await heldTurn(client(), userTurn(sessionId, "t2", "Take your time."));
    expectFailure(await client().send("DELETE", `/v1/sessions/${sessionId}`), 409, "SESSION_BUSY");
    expectOk(await cancel(client(), sessionId, "t2"));
    expectFailure(await waiting, 409, "TURN_CANCELLED");

    expect(expectOk(await client().send("DELETE", `/v1/sessions/${sessionId}`))).toEqual({ deleted: true });
    expectFailure(await client().session(sessionId), 404, "SESSION_NOT_FOUND");
    expectFailure(await client().trace(sessionId, "t1"), 404, "SESSION_NOT_FOUND");
    expectFailure(await client().get(`/v1/sessions/${sessionId}/turns/t1/events`), 404, "SESSION_NOT_FOUND");
    expectFailure(await client().get(`/v1/sessions/${sessionId}/messages`), 404, "SESSION_NOT_FOUND");
    expectFailure(await client().send("DELETE", `/v1/sessions/${sessionId}`), 404, "SESSION_NOT_FOUND");
    const listed = expectOk(await client().get<ListJson>("/v1/sessions?limit=100"));
    expect(listed.sessions.map((session) => session.sessionId)).not.toContain(sessionId);

    // The id starts a new session.
    harness.enqueue("Fresh.");
    expectFinal(await client().post(userTurn(sessionId, "t1", "Hello again.")));
    expect(expectOk(await client().session(sessionId)).turns).toHaveLength(1);
  });

  it("cancels a running turn: the waiting request gets TURN_CANCELLED, the session is free at once, and the provider continues from the turn before", async () => {
    const sessionId = uniqueId("cancel");
    harness.enqueue("First answer.");
    expectFinal(await client().post(userTurn(sessionId, "t1", "First.")));
    const firstResponseId = harness.responseRequests().at(-1)?.answer?.responseId;
    expect(firstResponseId).toEqual(expect.any(String));

    const { answer: waiting } = await heldTurn(client(), userTurn(sessionId, "t2", "Never mind."));
    const cancelledAt = Date.now();
    const cancelled = expectOk(await cancel(client(), sessionId, "t2"));
    expect(cancelled).toMatchObject({ turnId: "t2", status: "cancelled", error: { code: "TURN_CANCELLED" } });
    expectFailure(await waiting, 409, "TURN_CANCELLED");
    // The provider call was aborted: the held answer would have taken two minutes.
    expect(Date.now() - cancelledAt).toBeLessThan(5_000);

    const again = expectOk(await cancel(client(), sessionId, "t2"));
    expect(again).toEqual(cancelled);
    expectFailure(
      await client().post(toolContinuation(sessionId, "t2", [{ toolCallId: "call_x", resultJson: "1" }])),
      409,
      "TURN_NOT_AWAITING_TOOLS",
    );
    expectFailure(await client().post(userTurn(sessionId, "t2", "Never mind.")), 409, "TURN_CANCELLED");

    harness.enqueue("Third answer.");
    expectFinal(await client().post(userTurn(sessionId, "t3", "Third.")));
    expect(lastPreviousResponseId()).toBe(firstResponseId);
    const turns = expectOk(await client().session(sessionId)).turns;
    expect(turns.map((turn) => [turn.turnId, turn.status])).toEqual([
      ["t1", "completed"],
      ["t2", "cancelled"],
      ["t3", "completed"],
    ]);
    expectFailure(await cancel(client(), sessionId, "t9"), 404, "TURN_NOT_FOUND");
    expectFailure(await cancel(client(), sessionId, "t2", "bob"), 404, "SESSION_NOT_FOUND");
    // A turn that ended answers as it is.
    expect(expectOk(await cancel(client(), sessionId, "t3"))).toMatchObject({ status: "completed" });
  });

  it("cancels a streamed turn: its stream ends with a result event carrying TURN_CANCELLED", async () => {
    const sessionId = uniqueId("cancel-stream");
    const before = harness.responseRequests().length;
    harness.enqueue(HELD);
    const stream = await streamExecute(
      client().url,
      userTurn(sessionId, "t1", "Stream.", { stream: true }),
      API_KEYS.alice,
    );
    await waitFor(() => harness.responseRequests().length > before, "the held provider call");
    expectOk(await cancel(client(), sessionId, "t1"));
    const result = resultOf(await stream.readToEnd());
    expect(result).toMatchObject({ successful: false, errors: [{ code: "TURN_CANCELLED" }] });
  });

  it("cancels a turn awaiting client tools: the next turn continues from the turn before it", async () => {
    const sessionId = uniqueId("cancel-awaiting");
    harness.enqueue("Before.");
    expectFinal(await client().post(userTurn(sessionId, "t1", "Before.")));
    const firstResponseId = harness.responseRequests().at(-1)?.answer?.responseId;
    harness.enqueue(step.functionCalls({ name: "read_file", arguments: { path: "a" }, callId: "call_9" }));
    const paused = expectContinuation(await client().post(userTurn(sessionId, "t2", "Read a.")));
    expect(expectOk(await cancel(client(), sessionId, "t2"))).toMatchObject({ status: "cancelled" });
    const toolCallId = paused.toolCalls[0]?.toolCallId ?? "";
    expectFailure(
      await client().post(toolContinuation(sessionId, "t2", [{ toolCallId, resultJson: "1" }])),
      409,
      "TURN_NOT_AWAITING_TOOLS",
    );
    harness.enqueue("After.");
    expectFinal(await client().post(userTurn(sessionId, "t3", "After.")));
    expect(lastPreviousResponseId()).toBe(firstResponseId);
  });
});

describe("two instances on one Postgres", () => {
  const instances = useTwoInstances(() => harness);

  it("a cancel sent to the second instance aborts the first instance's provider call within a second", async () => {
    const { first: a, second: b } = instances;
    const sessionId = uniqueId("cancel-across");
    const { answer: waiting } = await heldTurn(a, userTurn(sessionId, "t1", "Long one."));
    const sentAt = Date.now();
    expect(expectOk(await cancel(b, sessionId, "t1"))).toMatchObject({ status: "cancelled" });
    expectFailure(await waiting, 409, "TURN_CANCELLED");
    // The held provider call would have taken two minutes: the first instance aborted it.
    expect(Date.now() - sentAt).toBeLessThan(1_500);

    harness.enqueue("Next.");
    expectFinal(await b.post(userTurn(sessionId, "t2", "Next.")));
  });
});

describe("two instances on one Postgres whose cancels notify no one (LISTEN dropped, or PgBouncer between)", () => {
  const instances = useTwoInstances(() => harness);

  beforeAll(async () => {
    // What a pooler in transaction mode does to LISTEN: nothing is ever heard. Here the cancel's trigger is gone.
    const { url, schema } = instances.first.database;
    const sql = postgresDriver()(url, { max: 1, onnotice: () => {}, fetch_types: false });
    try {
      await sql.unsafe(`drop trigger "turns_cancelled" on "${schema}"."turns"`);
    } finally {
      await sql.end({ timeout: 5 });
    }
  });

  it("a cancel sent to the second instance still stops the first instance's provider call within 3 s", async () => {
    const { first: a, second: b } = instances;
    const sessionId = uniqueId("cancel-polled");
    const { answer: waiting } = await heldTurn(a, userTurn(sessionId, "t1", "Long one."));
    const sentAt = Date.now();
    expect(expectOk(await cancel(b, sessionId, "t1"))).toMatchObject({ status: "cancelled" });
    expectFailure(await waiting, 409, "TURN_CANCELLED");
    // No notification came: the first instance's poll of its running turns found the cancel.
    expect(Date.now() - sentAt).toBeLessThan(3_000);
    harness.enqueue("Next.");
    expectFinal(await b.post(userTurn(sessionId, "t2", "Next.")));
  });
});

describe("two instances on one Postgres with a short lease: delete means gone", () => {
  const instances = useTwoInstances(() => harness, { APTIX_LEASE_MS: "1000" });

  it("deletes a deleted session's responses stored at OpenAI (DELETE /v1/responses/{id}), by the housekeeping", async () => {
    const { first: a, second: b } = instances;
    const sessionId = uniqueId("delete-stored");
    const kept = uniqueId("kept-stored");
    harness.enqueue("One.", "Two.", "Kept.");
    expectFinal(await a.post(userTurn(sessionId, "t1", "One.")));
    expectFinal(await a.post(userTurn(sessionId, "t2", "Two.")));
    expectFinal(await a.post(userTurn(kept, "t1", "Kept.")));
    const [one, two, third] = harness.responseRequests().map((request) => request.answer?.responseId ?? "");
    expect(harness.storedResponseIds()).toEqual(expect.arrayContaining([one, two, third]));

    expect(expectOk(await b.send("DELETE", `/v1/sessions/${sessionId}`))).toEqual({ deleted: true });
    await waitFor(
      () =>
        !harness.storedResponseIds().includes(one ?? "") && !harness.storedResponseIds().includes(two ?? ""),
      "the housekeeping to delete the stored responses",
    );
    expect(harness.storedResponseIds()).toContain(third);
  });

  it("no event of a deleted session survives an instance that lost its lease and went on streaming", async () => {
    const { first: a, second: b } = instances;
    const sessionId = uniqueId("delete-race");
    // The model streams for about five seconds, far past the lease: the first instance stalls in this call.
    harness.enqueue(
      step.reply({ text: Array.from({ length: 25 }, (_, index) => `chunk ${index}. `), chunkDelayMs: 200 }),
    );
    const stream = await streamExecute(
      a.url,
      userTurn(sessionId, "t1", "Stream for long.", { stream: true }),
      API_KEYS.alice,
    );
    await waitFor(() => (harness.responseRequests()[0]?.events.length ?? 0) > 6, "the first deltas");
    // The lease lapses; the second instance's reaper fails the turn; the session is deleted there.
    let status: string | undefined;
    for (const deadline = Date.now() + 10_000; status !== "failed" && Date.now() < deadline; ) {
      const session = await b.session(sessionId);
      status = session.body.successful ? session.body.result.turns[0]?.status : undefined;
      if (status !== "failed") await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe("failed");
    expect(expectOk(await b.send("DELETE", `/v1/sessions/${sessionId}`))).toEqual({ deleted: true });
    const deletedWhileStreaming = !(harness.responseRequests()[0]?.events ?? []).some(
      (event) => event.type === "response.completed",
    );

    // The first instance's stream ends once its round stopped (every flush of it done), and nothing is stored.
    await stream.readToEnd();
    const { url, schema } = a.database;
    const sql = postgresDriver()(url, { max: 1, onnotice: () => {}, fetch_types: false });
    try {
      const rows = (await sql.unsafe(
        `select (select count(*) from "${schema}"."turn_events" where session_id = '${sessionId}')::int as events,
                (select count(*) from "${schema}"."sessions" where session_id = '${sessionId}')::int as sessions`,
      )) as Array<{ events: number; sessions: number }>;
      expect(rows).toEqual([{ events: 0, sessions: 0 }]);
    } finally {
      await sql.end({ timeout: 5 });
    }
    expect(deletedWhileStreaming).toBe(true);

    // The id used again is a new session: its stream replays nothing of the deleted one.
    harness.enqueue(step.reply({ text: ["Fresh."] }));
    const again = await (
      await streamExecute(b.url, userTurn(sessionId, "t1", "Again.", { stream: true }), API_KEYS.alice)
    ).readToEnd();
    expect(shownTextOf(again)).toBe("Fresh.");
    const replayed = await (
      await streamTurnEvents(b.url, sessionId, "t1", { apiKey: API_KEYS.alice })
    ).readToEnd();
    expect(shownTextOf(replayed)).toBe("Fresh.");
  });
});
