import { type ScriptStep, step } from "@aptix/testing-llm-servers";
import { expect, it } from "vitest";
import { expectFailure, expectFinal, expectOk, uniqueId, userTurn } from "../../../src/e2e/index.js";
import { type ScenarioContext, STRICT_TIMEOUT_MS } from "./context.js";

/** Scenario 9: provider failures, and the session's next turn after each. */
export function providerFailureScenarios(ctx: ScenarioContext): void {
  it("rides out a 429 with the SDK's retry", async () => {
    const sessionId = uniqueId("rate-limited");
    ctx.harness.script(step.rateLimited(0), step.text("After the retry."));

    const answer = expectFinal(await ctx.service.post(userTurn(sessionId, "t1", "Hello")));
    expect(answer.primaryOutputText).toBe("After the retry.");
    expect(ctx.harness.responseRequests().map((request) => request.answer?.status)).toEqual([429, 200]);
    // The retry sent the same body.
    const [first, second] = ctx.harness.responseRequests();
    expect(second?.body).toEqual(first?.body);

    const summary = expectOk(await ctx.service.session(sessionId));
    expect(summary.turns.map((turn) => turn.status)).toEqual(["completed"]);
  });

  const failures: Array<{ name: string; failure: ScriptStep; details: Record<string, unknown> }> = [
    {
      name: "a 500",
      failure: step.error(500, { message: "The model is down.", type: "server_error", code: "server_down" }),
      details: { provider: "openai", status: 500, code: "server_down" },
    },
    {
      name: "a timeout",
      failure: step.text("Too late.", { delayMs: STRICT_TIMEOUT_MS * 3 }),
      details: { provider: "openai" },
    },
    {
      name: "a malformed body",
      failure: step.raw(),
      details: { provider: "openai" },
    },
  ];

  it.each(failures)(
    "answers 502 PROVIDER_ERROR for $name, and the session's next turn succeeds",
    async ({ failure, details }) => {
      const sessionId = uniqueId("provider-failure");
      ctx.harness.script(failure, step.text("Back to normal."));

      const started = Date.now();
      const failed = await ctx.strict.post(userTurn(sessionId, "t1", "Try this."));
      const elapsed = Date.now() - started;
      const error = expectFailure(failed, 502, "PROVIDER_ERROR");
      expect(error.details).toMatchObject(details);
      expect(JSON.stringify(failed.body)).not.toMatch(/resp_/);
      // No retries were configured: one request per failure. A timeout is cut at the configured limit.
      expect(ctx.harness.responseRequests()).toHaveLength(1);
      expect(elapsed).toBeLessThan(STRICT_TIMEOUT_MS * 3);

      const failedSummary = expectOk(await ctx.strict.session(sessionId));
      expect(failedSummary.turns.map((turn) => [turn.turnId, turn.status, turn.error?.code])).toEqual([
        ["t1", "failed", "PROVIDER_ERROR"],
      ]);
      const trace = expectOk(await ctx.strict.trace(sessionId, "t1"));
      expect(trace.llmCalls.map((call) => call.error?.code)).toEqual(["PROVIDER_ERROR"]);

      const next = expectFinal(await ctx.strict.post(userTurn(sessionId, "t2", "Once more.")));
      expect(next.primaryOutputText).toBe("Back to normal.");
      // The failed turn left nothing for the provider to continue from: the session starts over with its system message.
      const retry = ctx.harness.responseRequests()[1]?.body as Record<string, unknown>;
      expect(retry.previous_response_id).toBeUndefined();
      expect((retry.input as Array<{ role: string }>).map((item) => item.role)).toEqual(["system", "user"]);

      const summary = expectOk(await ctx.strict.session(sessionId));
      expect(summary.turns.map((turn) => [turn.turnId, turn.status])).toEqual([
        ["t1", "failed"],
        ["t2", "completed"],
      ]);
    },
  );

  it("keeps the conversation after a failure in a later turn: the next turn continues from the last good response", async () => {
    const sessionId = uniqueId("later-failure");
    ctx.harness.script(step.text("First."), step.error(500), step.text("Third."));

    expectFinal(await ctx.strict.post(userTurn(sessionId, "t1", "One")));
    expectFailure(await ctx.strict.post(userTurn(sessionId, "t2", "Two")), 502, "PROVIDER_ERROR");
    expectFinal(await ctx.strict.post(userTurn(sessionId, "t3", "Three")));

    const [first, second, third] = ctx.harness.responseRequests();
    const firstId = first?.answer?.responseId;
    expect(second?.body).toMatchObject({ previous_response_id: firstId });
    expect(third?.body).toMatchObject({ previous_response_id: firstId });
    expect((third?.body as { input?: unknown[] } | undefined)?.input).toHaveLength(1);
  });
}
