import { describe, expect, it } from "vitest";
import { createTestAgent, fileIdOf, PRINCIPAL, responseOf, resultOf } from "../support/test-agent.js";

const sessionNotFound = (sessionId: string) => ({
  successful: false,
  errors: [{ code: "SESSION_NOT_FOUND", message: `No session "${sessionId}".`, details: { sessionId } }],
  warnings: [],
});

describe("sessions scoped by principal (docs/architecture.md, Turn lifecycle)", () => {
  it("keeps the same sessionId of two principals as two unrelated sessions", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { text: "Hi Alice." },
      {
        toolCalls: [
          { name: "agent_change_mode", arguments: { mode: "review", reason: "Bob reviews.", branch: false } },
        ],
      },
      { text: "Reviewing for Bob." },
      { text: "Still general for Alice." },
    );
    responseOf(await agent.execute({ sessionId: "shared", turnId: "t1", instruction: "Alice here" }));
    responseOf(await agent.execute({ sessionId: "shared", turnId: "t1", instruction: "Bob here" }, "bob"));
    responseOf(await agent.execute({ sessionId: "shared", turnId: "t2", instruction: "Alice again" }));

    const [alice1, bob1, , alice2] = agent.provider.requests;
    expect(alice1?.continuation).toEqual({ type: "none" });
    // Bob's session is new: its own system prompt, no continuation from Alice's response.
    expect(bob1?.continuation).toEqual({ type: "none" });
    expect(bob1?.input[0]).toEqual({ type: "system_message", text: "You are Aptix.\n\nHelp with anything." });
    expect(alice2?.continuation).toEqual({ type: "previous_response", responseId: "resp_1" });
    expect(alice2?.input).toEqual([
      {
        type: "user_message",
        content: [{ type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nAlice again" }],
      },
    ]);

    const alice = resultOf(await agent.service.getSession(PRINCIPAL, "shared"));
    const bob = resultOf(await agent.service.getSession("bob", "shared"));
    expect([alice.mode, alice.turns.map((turn) => turn.turnId), alice.modeHistory]).toEqual([
      "general",
      ["t1", "t2"],
      [],
    ]);
    expect([
      bob.mode,
      bob.turns.map((turn) => turn.turnId),
      bob.modeHistory.map((entry) => entry.changedBy),
    ]).toEqual(["review", ["t1"], ["bob"]]);
  });

  it("answers another principal's session, turn, trace, continuation and file exactly as unknown ids", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { toolCalls: [{ name: "lookup", arguments: { query: "secret" }, callId: "s1" }] },
      { toolCalls: [{ name: "read_file", arguments: { path: "secret.ts" }, callId: "c1" }] },
    );
    const paused = responseOf(
      await agent.execute({ sessionId: "alice-only", turnId: "t1", instruction: "Private" }),
    );
    expect(paused.kind).toBe("client_tool_continuation");
    const trace = resultOf(await agent.service.getTurnTrace(PRINCIPAL, "alice-only", "t1"));
    expect(trace.toolExecutions).toHaveLength(1);
    const fileId = "file_2";
    expect(resultOf(await agent.service.getFile(PRINCIPAL, fileId)).file.name).toBe("answer.txt");

    expect(await agent.service.getSession("bob", "alice-only")).toEqual(sessionNotFound("alice-only"));
    expect(await agent.service.getSession("bob", "nobody-has-this")).toEqual(
      sessionNotFound("nobody-has-this"),
    );
    expect(await agent.service.getTurnTrace("bob", "alice-only", "t1")).toEqual(
      sessionNotFound("alice-only"),
    );
    expect(await agent.service.getFile("bob", fileId)).toEqual({
      successful: false,
      errors: [{ code: "FILE_NOT_FOUND", message: `No file "${fileId}".`, details: { fileId } }],
      warnings: [],
    });
    expect(await agent.service.getFile("bob", "file_999")).toEqual({
      successful: false,
      errors: [{ code: "FILE_NOT_FOUND", message: 'No file "file_999".', details: { fileId: "file_999" } }],
      warnings: [],
    });
    const stolen = await agent.execute(
      {
        sessionId: "alice-only",
        turnId: "t1",
        toolResults: [{ toolCallId: "c1", executionMs: 1, resultJson: '"mine"' }],
      },
      "bob",
    );
    expect(stolen).toEqual(sessionNotFound("alice-only"));

    // Alice's turn is untouched and still awaits her results.
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "alice-only")).turns[0]?.status).toBe(
      "awaiting_client_tools",
    );
    expect(agent.provider.requests).toHaveLength(2);
  });

  it("answers an unknown turn of one's own session with TURN_NOT_FOUND, whoever else has that turn id", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "Alice." }, { text: "Bob." });
    responseOf(await agent.execute({ sessionId: "s", turnId: "alice-turn", instruction: "A" }));
    responseOf(await agent.execute({ sessionId: "s", turnId: "bob-turn", instruction: "B" }, "bob"));
    for (const turnId of ["alice-turn", "no-such-turn"]) {
      expect(await agent.service.getTurnTrace("bob", "s", turnId)).toEqual({
        successful: false,
        errors: [
          { code: "TURN_NOT_FOUND", message: `No turn "${turnId}" in this session.`, details: { turnId } },
        ],
        warnings: [],
      });
    }
  });

  it("lets only the owner fetch a produced file", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ toolCalls: [{ name: "lookup", arguments: { query: "x" } }] }, { text: "Here." });
    const final = responseOf(
      await agent.execute({ sessionId: "s", turnId: "t1", instruction: "File please" }),
    );
    const url = final.kind === "final" ? final.files?.[0]?.url : undefined;
    if (!url) throw new Error("no file");
    expect(
      new TextDecoder().decode(resultOf(await agent.service.getFile(PRINCIPAL, fileIdOf(url))).content),
    ).toBe("answer to x");
    expect((await agent.service.getFile("bob", fileIdOf(url))).successful).toBe(false);
  });
});
