/**
 * Branches over real HTTP (docs/http-api.md, "Rewind"), on both providers and both stores: the scripted model's
 * view of the conversation (OpenAI: the stored `previous_response_id` chain and the request's input; Anthropic:
 * the request's messages) shows what a rewind left in and out.
 */

import type { AgentExecuteResponse } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import {
  API_KEYS,
  CREATE_FILE_CATALOG,
  expectFailure,
  expectFinal,
  expectOk,
  PROVIDER_CONTEXTS,
  PROVIDERS_CATALOG,
  type ProviderId,
  type SessionSummaryJson,
  uniqueId,
  userTurn,
} from "../../src/e2e/index.js";
import { type BothProviders, setUpBothProviders } from "../support/both-providers.js";

const QUESTIONS = ["Where is the red key?", "Where is the blue key?", "Where is the green key?"];
const ANSWERS = ["Under the red mat.", "Behind the blue door.", "In the green box."];

/** Everything the model could see when it answered the latest request of `provider`. */
function seenByModel(providers: BothProviders, provider: ProviderId): string {
  const body = JSON.parse(providers.rigs[provider].rawBodies().at(-1) ?? "{}") as Record<string, unknown>;
  if (provider === "anthropic" || typeof body.previous_response_id !== "string") return JSON.stringify(body);
  return JSON.stringify([providers.openai.transcript(body.previous_response_id), body.input]);
}

type Messages = { messages: Array<{ turnId: string; role: string }> };

/** Both providers' contexts, their general mode offering `create_file` too. */
const BRANCHES_CATALOG = {
  ...PROVIDERS_CATALOG,
  modes: CREATE_FILE_CATALOG.modes,
  serverTools: CREATE_FILE_CATALOG.serverTools,
};

/** The names of the tools the latest request of `provider` offered the model. */
function toolsOffered(providers: BothProviders, provider: ProviderId): string[] {
  const body = JSON.parse(providers.rigs[provider].rawBodies().at(-1) ?? "{}") as {
    tools?: Array<{ name: string }>;
  };
  return (body.tools ?? []).map((tool) => tool.name);
}

describe.each(["pglite", "postgres"] as const)("branches on %s", (store) => {
  const providers = setUpBothProviders({ store, catalog: BRANCHES_CATALOG });
  const service = () => providers.service;
  const rewind = (sessionId: string, beforeTurnId: unknown, as?: "alice" | "bob") =>
    service().send<SessionSummaryJson>("POST", `/v1/sessions/${sessionId}/rewind`, { beforeTurnId }, as);

  /** Turns t1–t3 of a new session, each answered. */
  async function threeTurns(provider: ProviderId): Promise<string> {
    const sessionId = uniqueId(`branches-${provider}`);
    const conversationContextId = PROVIDER_CONTEXTS[provider];
    for (const [index, question] of QUESTIONS.entries()) {
      providers.rigs[provider].enqueue({ text: [ANSWERS[index] as string], usage: { input: 40, output: 5 } });
      const turn = userTurn(sessionId, `t${index + 1}`, question, { conversationContextId });
      expect(expectFinal(await service().post(turn)).primaryOutputText).toBe(ANSWERS[index]);
    }
    return sessionId;
  }

  it.each(["openai", "anthropic"] as const)(
    "%s: after a rewind the model sees the turns before it and the new input, nothing after it",
    async (provider) => {
      const sessionId = await threeTurns(provider);
      const rewound = expectOk(await rewind(sessionId, "t2"));
      expect(rewound.turns.map((turn) => [turn.turnId, turn.status])).toEqual([
        ["t1", "completed"],
        ["t2", "superseded"],
        ["t3", "superseded"],
      ]);
      // Sent again, it changes nothing.
      expect(expectOk(await rewind(sessionId, "t2"))).toEqual(rewound);

      providers.rigs[provider].enqueue({ text: ["Try the kitchen."], usage: { input: 40, output: 5 } });
      const next = userTurn(sessionId, "t4", "Where is the yellow key?", {
        conversationContextId: PROVIDER_CONTEXTS[provider],
      });
      expect(expectFinal(await service().post(next)).primaryOutputText).toBe("Try the kitchen.");
      const seen = seenByModel(providers, provider);
      for (const shown of [QUESTIONS[0], ANSWERS[0], "Where is the yellow key?"])
        expect(seen).toContain(shown);
      for (const gone of [QUESTIONS[1], ANSWERS[1], QUESTIONS[2], ANSWERS[2]])
        expect(seen).not.toContain(gone);

      const messages = expectOk(await service().get<Messages>(`/v1/sessions/${sessionId}/messages`));
      expect(messages.messages.map((message) => message.turnId)).toEqual(["t1", "t1", "t4", "t4"]);
      const all = expectOk(
        await service().get<Messages>(`/v1/sessions/${sessionId}/messages?include=superseded`),
      );
      expect(all.messages.map((message) => message.turnId)).toEqual([
        "t1",
        "t1",
        "t2",
        "t2",
        "t3",
        "t3",
        "t4",
        "t4",
      ]);
    },
  );

  it.each(["openai", "anthropic"] as const)(
    "%s: a regenerated answer is made without the old one in view, and sent again answers as stored",
    async (provider) => {
      const sessionId = await threeTurns(provider);
      providers.rigs[provider].enqueue({
        text: ["Maybe in the green vase."],
        usage: { input: 40, output: 5 },
      });
      const path = `/v1/sessions/${sessionId}/turns/t3/regenerate`;
      const answer = await service().send<AgentExecuteResponse>("POST", path, { newTurnId: "t3b" });
      const regenerated = expectFinal(answer);
      expect([regenerated.turnId, regenerated.primaryOutputText]).toEqual([
        "t3b",
        "Maybe in the green vase.",
      ]);
      const seen = seenByModel(providers, provider);
      for (const shown of [...QUESTIONS, ANSWERS[0], ANSWERS[1]]) expect(seen).toContain(shown);
      expect(seen).not.toContain(ANSWERS[2]);
      const view = expectOk(await service().session(sessionId));
      expect(view.turns.map((turn) => [turn.turnId, turn.status])).toEqual([
        ["t1", "completed"],
        ["t2", "completed"],
        ["t3", "superseded"],
        ["t3b", "completed"],
      ]);
      const again = await service().send<AgentExecuteResponse>("POST", path, { newTurnId: "t3b" });
      expect(expectFinal(again)).toEqual(regenerated);
      expect(providers.rigs[provider].requestCount()).toBe(4);
      // Only the last turn answers again.
      const older = `/v1/sessions/${sessionId}/turns/t2/regenerate`;
      const refused = expectFailure(
        await service().send("POST", older, { newTurnId: "t2b" }),
        400,
        "VALIDATION_FAILED",
      );
      expect(refused.details?.fields).toEqual([expect.objectContaining({ path: "turnId" })]);
    },
  );

  it.each(["openai", "anthropic"] as const)(
    "%s: useChat's regenerate-message and edit run as a regenerate and a rewind",
    async (provider) => {
      const sessionId = await threeTurns(provider);
      const chat = async (body: Record<string, unknown>) => {
        const response = await fetch(`${service().url}/v1/chat`, {
          method: "POST",
          headers: { authorization: `Bearer ${API_KEYS.alice}`, "content-type": "application/json" },
          body: JSON.stringify({
            id: sessionId,
            conversationContextId: PROVIDER_CONTEXTS[provider],
            ...body,
          }),
        });
        expect(response.status).toBe(200);
        return response.text();
      };
      const user = (id: string, text: string) => ({ id, role: "user", parts: [{ type: "text", text }] });
      providers.rigs[provider].enqueue({
        text: ["Perhaps the green shed."],
        usage: { input: 40, output: 5 },
      });
      const regenerated = await chat({
        trigger: "regenerate-message",
        messages: [user("t3", QUESTIONS[2] as string)],
      });
      expect(regenerated).toContain("Perhaps the green shed.");
      expect(seenByModel(providers, provider)).not.toContain(ANSWERS[2]);

      providers.rigs[provider].enqueue({ text: ["On the purple hook."], usage: { input: 40, output: 5 } });
      const edited = await chat({
        trigger: "submit-message",
        messageId: "t2",
        messages: [user("t1", QUESTIONS[0] as string), user("t2", "Where is the purple key?")],
      });
      expect(edited).toContain("On the purple hook.");
      const seen = seenByModel(providers, provider);
      for (const shown of [QUESTIONS[0], ANSWERS[0], "Where is the purple key?"])
        expect(seen).toContain(shown);
      for (const gone of [QUESTIONS[1], ANSWERS[1], QUESTIONS[2], "Perhaps the green shed."])
        expect(seen).not.toContain(gone);
      const view = expectOk(await service().session(sessionId));
      expect(view.turns.map((turn) => turn.status)).toEqual([
        "completed",
        "superseded",
        "superseded",
        "superseded",
        "completed",
      ]);
    },
  );

  it.each(["openai", "anthropic"] as const)(
    "%s: a fork at turn 3 of 3 sees turns 1 and 2, and keeps working once its source and its stored responses are gone",
    async (provider) => {
      const sessionId = await threeTurns(provider);
      const forkId = uniqueId(`fork-${provider}`);
      const path = `/v1/sessions/${sessionId}/fork`;
      const forked = await service().send<SessionSummaryJson>("POST", path, {
        newSessionId: forkId,
        atTurnId: "t3",
      });
      expect([forked.status, forked.body.successful]).toEqual([201, true]);
      const view = (forked.body as { result: SessionSummaryJson }).result;
      expect(view.forkedFrom).toEqual({ sessionId, turnId: "t3" });
      expect(view.turns.map((turn) => turn.turnId)).toEqual(["t1", "t2"]);
      // Sent again, the same fork; by another principal, as unknown.
      const again = await service().send("POST", path, { newSessionId: forkId, atTurnId: "t3" });
      expect(again.status).toBe(201);
      expectFailure(
        await service().send("POST", path, { newSessionId: uniqueId("x") }, "bob"),
        404,
        "SESSION_NOT_FOUND",
      );

      expectOk(await service().send("DELETE", `/v1/sessions/${sessionId}`));
      for (const id of providers.openai.storedResponseIds()) providers.openai.forget(id);
      const conversationContextId = PROVIDER_CONTEXTS[provider];
      providers.rigs[provider].enqueue(
        { text: ["Check the attic."], usage: { input: 40, output: 5 } },
        { text: ["Then the cellar."], usage: { input: 40, output: 5 } },
      );
      const next = userTurn(forkId, "f1", "Where is the white key?", { conversationContextId });
      expect(expectFinal(await service().post(next)).primaryOutputText).toBe("Check the attic.");
      const seen = seenByModel(providers, provider);
      for (const shown of [QUESTIONS[0], ANSWERS[0], QUESTIONS[1], ANSWERS[1], "Where is the white key?"])
        expect(seen).toContain(shown);
      for (const gone of [QUESTIONS[2], ANSWERS[2]]) expect(seen).not.toContain(gone);
      const later = userTurn(forkId, "f2", "And if not there?", { conversationContextId });
      expect(expectFinal(await service().post(later)).primaryOutputText).toBe("Then the cellar.");
      expect(seenByModel(providers, provider)).toContain("Check the attic.");
    },
  );

  it("a file a copied turn made downloads while any session holding it exists: the source, its forks, a fork deleted first", async () => {
    const sessionId = uniqueId("branch-files");
    const conversationContextId = PROVIDER_CONTEXTS.openai;
    const content = "red: under the mat\n";
    const input = { name: "keys.txt", mimeType: "text/plain", content, encoding: null, description: null };
    providers.rigs.openai.enqueue(
      { toolCalls: [{ id: "call_file", name: "create_file", input }], usage: { input: 40, output: 5 } },
      { text: ["Written down."], usage: { input: 40, output: 5 } },
      { text: ["You are welcome."], usage: { input: 40, output: 5 } },
    );
    const made = expectFinal(
      await service().post(userTurn(sessionId, "t1", "Note the keys", { conversationContextId })),
    );
    expectFinal(await service().post(userTurn(sessionId, "t2", "Thanks", { conversationContextId })));
    const url = made.files?.[0]?.url ?? "";
    const download = async () => {
      const answer = await fetch(url, { headers: { authorization: `Bearer ${API_KEYS.alice}` } });
      return [answer.status, await answer.text()];
    };
    const fork = async (newSessionId: string, atTurnId?: string) => {
      const body = { newSessionId, ...(atTurnId === undefined ? {} : { atTurnId }) };
      const forked = await service().send("POST", `/v1/sessions/${sessionId}/fork`, body);
      expect(forked.status).toBe(201);
    };
    const remove = async (id: string) => expectOk(await service().send("DELETE", `/v1/sessions/${id}`));
    expect(await download()).toEqual([200, content]);

    // A fork deleted first leaves the source's file.
    const first = uniqueId("fork-first");
    await fork(first);
    await remove(first);
    expect(await download()).toEqual([200, content]);
    // The source deleted, its forks still download it, until the last of them goes.
    const whole = uniqueId("fork-whole");
    const before = uniqueId("fork-before-t2");
    await fork(whole);
    await fork(before, "t2");
    await remove(sessionId);
    expect(await download()).toEqual([200, content]);
    await remove(whole);
    expect(await download()).toEqual([200, content]);
    await remove(before);
    expect((await download())[0]).toBe(404);
  });

  it.each(["openai", "anthropic"] as const)(
    "%s: a rewind before the turn that changed the mode brings the earlier mode and its tools back",
    async (provider) => {
      const sessionId = uniqueId(`branch-mode-${provider}`);
      const conversationContextId = PROVIDER_CONTEXTS[provider];
      const toReview = { mode: "review", reason: "The user wants a review.", branch: false };
      providers.rigs[provider].enqueue(
        { text: ["Hello."], usage: { input: 40, output: 5 } },
        {
          toolCalls: [{ id: "call_mode", name: "agent_change_mode", input: toReview }],
          usage: { input: 40, output: 5 },
        },
        { text: ["Show me the diff."], usage: { input: 40, output: 5 } },
        { text: ["What else?"], usage: { input: 40, output: 5 } },
      );
      const turn = (turnId: string, text: string) =>
        userTurn(sessionId, turnId, text, { conversationContextId });
      expectFinal(await service().post(turn("t1", "Hi")));
      expectFinal(await service().post(turn("t2", "Review this")));
      expect(expectOk(await service().session(sessionId)).mode).toBe("review");

      const rewound = expectOk(await rewind(sessionId, "t2"));
      expect(rewound.mode).toBe("general");
      expect(rewound.modeHistory.map((entry) => [entry.turnId, entry.previousMode, entry.newMode])).toEqual([
        ["t2", "general", "review"],
        ["t2", "review", "general"],
      ]);
      expect(rewound.modeHistory[1]?.reason).toContain("Rewound before turn t2");
      expectFinal(await service().post(turn("t3", "Never mind")));
      const offered = toolsOffered(providers, provider);
      expect(offered).toEqual(expect.arrayContaining(["read_file", "create_file"]));
      expect(offered).not.toContain("submit_review");
    },
  );

  it("answers another principal's session and turn exactly as unknown ones, judges the body, and is busy while a turn runs", async () => {
    const sessionId = await threeTurns("openai");
    const other = uniqueId("nobody");
    const theirs = await rewind(sessionId, "t1", "bob");
    const unknown = await rewind(other, "t1");
    expectFailure(theirs, 404, "SESSION_NOT_FOUND");
    expect(JSON.stringify(theirs.body).replaceAll(sessionId, "<id>")).toBe(
      JSON.stringify(unknown.body).replaceAll(other, "<id>"),
    );
    expectFailure(await rewind(sessionId, "t9"), 404, "TURN_NOT_FOUND");
    const bad = expectFailure(await rewind(sessionId, 7), 400, "VALIDATION_FAILED");
    expect(bad.details?.fields).toEqual([expect.objectContaining({ path: "beforeTurnId" })]);
    // While a turn runs the session is busy, and the rewind changes nothing.
    providers.rigs.openai.enqueue({ text: ["Slowly."], usage: { input: 40, output: 5 }, delayMs: 1_000 });
    const running = service().post(
      userTurn(sessionId, "t4", "Take your time.", { conversationContextId: PROVIDER_CONTEXTS.openai }),
    );
    await expect.poll(() => providers.rigs.openai.requestCount()).toBe(4);
    expectFailure(await rewind(sessionId, "t1"), 409, "SESSION_BUSY");
    expectFinal(await running);
    // Nothing of it changed the session.
    const view = expectOk(await service().session(sessionId));
    expect(view.turns.map((turn) => turn.status)).toEqual([
      "completed",
      "completed",
      "completed",
      "completed",
    ]);
  });
});
