/**
 * Server tools that ask first (docs/server-tools.md) over real HTTP, on PGlite and Postgres: an MCP server configured with
 * `"approval": "always"` (a real process over streamable HTTP, counting the calls it receives), a client tool in
 * the same round, and every answer a client can give: approve, decline, an unknown-tool error, a cancel, the same
 * continuation sent twice and, on Postgres, a second instance taking the continuation.
 */
import { afterAll, describe, expect, it } from "vitest";
import {
  E2E_CATALOG,
  expectContinuation,
  expectFailure,
  expectFinal,
  lastToolOutputs,
  PROVIDER_CONTEXTS,
  PROVIDERS_CATALOG,
  startHttpMcpFixture,
  startTestService,
  toolContinuation,
  uniqueId,
  userTurn,
  writeCatalog,
} from "../../src/e2e/index.js";
import { setUpBothProviders } from "../support/both-providers.js";

const READ_FILE = E2E_CATALOG.clientTools[0];
const OPENAI = { conversationContextId: PROVIDER_CONTEXTS.openai };

/** The fixture over HTTP is one process whatever the instance, so its call counts cover every instance. */
const fixture = await startHttpMcpFixture();
afterAll(() => fixture.stop());

/** `ops` asks first for every tool but `report`, which a `serverTools` entry lets run on the model's word. */
const CATALOG = {
  ...PROVIDERS_CATALOG,
  modes: [{ ...PROVIDERS_CATALOG.modes[0], tools: ["read_file", "ops__echo", "ops__report"] }],
  clientTools: [READ_FILE],
  serverTools: [{ name: "ops__report", approval: "never" }],
  mcpServers: [{ ...fixture.config("ops"), approval: "always" }],
};

const ECHO_CALL = { id: "call_echo", name: "ops__echo", input: { text: "deploy" } };
const READ_CALL = { id: "call_read", name: "read_file", input: { path: "src/a.ts" } };
const READ_RESULT = { toolCallId: "call_read", resultJson: '"export {}"' };
const approve = (answer: unknown) => ({ toolCallId: "call_echo", resultJson: JSON.stringify(answer) });

describe.each(["pglite", "postgres"] as const)("on %s", (store) => {
  const providers = setUpBothProviders({ store, catalog: CATALOG });
  const echoes = async () => (await fixture.calls()).echo ?? 0;
  const rig = () => providers.rigs.openai;
  const service = () => providers.service;

  /** A turn whose model called `ops__echo` and `read_file` in one round, paused for both. */
  async function pausedTurn(prefix: string) {
    const sessionId = uniqueId(`${prefix}-${store}`);
    rig().enqueue({ toolCalls: [ECHO_CALL, READ_CALL], usage: { input: 30, output: 9 } });
    const paused = expectContinuation(await service().post(userTurn(sessionId, "t1", "Deploy it", OPENAI)));
    return { sessionId, paused };
  }

  it("hands back the approval and the client call in the model's order, and runs the tool only once approved", async () => {
    const before = await echoes();
    const { sessionId, paused } = await pausedTurn("approve");
    expect(paused.toolCalls).toEqual([
      {
        toolCallId: "call_echo",
        name: "aptix_approve",
        argumentsJson: JSON.stringify({
          tool: "ops__echo",
          argumentsJson: '{"text":"deploy"}',
          server: "ops",
        }),
      },
      { toolCallId: "call_read", name: "read_file", argumentsJson: '{"path":"src/a.ts"}' },
    ]);
    expect(await echoes()).toBe(before);

    rig().enqueue({ text: ["Deployed."], usage: { input: 50, output: 2 } });
    const continuation = toolContinuation(sessionId, "t1", [approve({ approved: true }), READ_RESULT]);
    const final = expectFinal(await service().post(continuation));
    expect(final.primaryOutputText).toBe("Deployed.");
    expect(final.toolResults?.map(({ name, resultJson }) => [name, resultJson])).toEqual([
      ["ops__echo", JSON.stringify("echo: deploy")],
    ]);
    expect(await echoes()).toBe(before + 1);
    // The model heard the tool's own output, never the approval.
    expect(lastToolOutputs(providers.openai)).toEqual({
      call_echo: JSON.stringify("echo: deploy"),
      call_read: '"export {}"',
    });

    // The same continuation again is a replay: the same answer, and the tool does not run twice.
    expect(expectFinal(await service().post(continuation))).toEqual(final);
    expect(await echoes()).toBe(before + 1);

    const trace = await service().trace(sessionId, "t1");
    expect(trace.body).toMatchObject({ successful: true });
    const executions = (trace.body as { result: { toolExecutions: Array<Record<string, unknown>> } }).result
      .toolExecutions;
    expect(executions.find((execution) => execution.name === "ops__echo")).toMatchObject({
      approval: { approved: true, decidedBy: "alice" },
    });
  });

  it("sends the model the pinned output of a declined call, with the user's message, and runs nothing", async () => {
    const before = await echoes();
    const { sessionId } = await pausedTurn("decline");
    rig().enqueue({ text: ["Not deployed."], usage: { input: 50, output: 2 } });
    const final = expectFinal(
      await service().post(
        toolContinuation(sessionId, "t1", [
          approve({ approved: false, message: "Not on a Friday." }),
          READ_RESULT,
        ]),
      ),
    );
    expect(final.toolResults ?? []).toEqual([]);
    expect(lastToolOutputs(providers.openai).call_echo).toBe(
      JSON.stringify({ error: "The user did not approve this call of ops__echo. Not on a Friday." }),
    );
    expect(await echoes()).toBe(before);
  });

  it("declines for a client that answers aptix_approve with an unknown-tool error", async () => {
    const before = await echoes();
    const { sessionId } = await pausedTurn("unknown");
    rig().enqueue({ text: ["Skipped."], usage: { input: 50, output: 2 } });
    expectFinal(
      await service().post(
        toolContinuation(sessionId, "t1", [
          { toolCallId: "call_echo", errorMessage: "Unknown tool: aptix_approve" },
          READ_RESULT,
        ]),
      ),
    );
    expect(lastToolOutputs(providers.openai).call_echo).toBe(
      JSON.stringify({ error: "The user did not approve this call of ops__echo." }),
    );
    expect(await echoes()).toBe(before);
  });

  it("runs nothing of a turn cancelled while it waited for the approval", async () => {
    const before = await echoes();
    const { sessionId } = await pausedTurn("cancel");
    const cancelled = await service().send("POST", `/v1/sessions/${sessionId}/turns/t1/cancel`);
    expect(cancelled.status).toBe(200);
    expectFailure(
      await service().post(toolContinuation(sessionId, "t1", [approve({ approved: true }), READ_RESULT])),
      409,
      "TURN_NOT_AWAITING_TOOLS",
    );
    expect(await echoes()).toBe(before);
  });

  it("runs a tool the configuration lets run on the model's word without asking", async () => {
    const sessionId = uniqueId(`never-${store}`);
    rig().enqueue(
      { toolCalls: [{ id: "call_report", name: "ops__report", input: {} }], usage: { input: 30, output: 9 } },
      { text: ["Reported."], usage: { input: 50, output: 2 } },
    );
    const final = expectFinal(await service().post(userTurn(sessionId, "t1", "Report", OPENAI)));
    expect(final.toolResults?.map(({ name }) => name)).toEqual(["ops__report"]);
  });

  if (store === "postgres") {
    it("lets a second instance take the continuation, running the tool there once", async () => {
      const before = await echoes();
      const { sessionId } = await pausedTurn("second");
      const second = await startTestService({
        store,
        database: providers.service.database,
        harness: providers.openai,
        anthropic: providers.anthropic,
        env: {
          APTIX_CONFIG: await writeCatalog(CATALOG),
          APTIX_OPENAI_MAX_RETRIES: "0",
          APTIX_ANTHROPIC_MAX_RETRIES: "0",
        },
      });
      try {
        rig().enqueue({ text: ["Deployed there."], usage: { input: 50, output: 2 } });
        const final = expectFinal(
          await second.post(toolContinuation(sessionId, "t1", [approve({ approved: true }), READ_RESULT])),
        );
        expect(final.toolResults?.map(({ name }) => name)).toEqual(["ops__echo"]);
        expect(await echoes()).toBe(before + 1);
      } finally {
        await second.close();
      }
    });
  }
});
