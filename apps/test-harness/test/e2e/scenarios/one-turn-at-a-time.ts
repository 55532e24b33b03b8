import { type ScriptedOpenAI, step } from "@aptix/testing-llm-servers";
import { expect, it } from "vitest";
import {
  expectFailure,
  expectFinal,
  expectOk,
  type ServiceClient,
  uniqueId,
  userTurn,
  waitFor,
} from "../../../src/e2e/index.js";
import type { ScenarioContext } from "./context.js";

/** How long the scripted model takes over the first turn: long enough to send a second request meanwhile. */
const SLOW_MS = 1_500;

/** Resolves once the harness has received `count` model requests (the turn holds its session's lease then). */
function providerRequests(harness: ScriptedOpenAI, count: number): Promise<void> {
  return waitFor(() => harness.responseRequests().length >= count, `${count} provider request(s)`);
}

/**
 * The serialization every store must give, whichever servers the two requests reach: turn 1 runs slowly on
 * `first`; turn 2 sent meanwhile to `second` is SESSION_BUSY; once turn 1 is done, turn 2's retry continues it.
 */
export async function expectSerialized(
  harness: ScriptedOpenAI,
  first: ServiceClient,
  second: ServiceClient,
): Promise<void> {
  const sessionId = uniqueId("serialized");
  harness.script(step.text("The slow answer.", { delayMs: SLOW_MS }), step.text("The second answer."));

  const slow = first.post(userTurn(sessionId, "t1", "Take your time."));
  await providerRequests(harness, 1);
  const busy = await second.post(userTurn(sessionId, "t2", "Me too!"));
  expect(expectFailure(busy, 409, "SESSION_BUSY").details).toMatchObject({ sessionId });
  // The running turn itself, sent again, is busy too: it has no stored answer yet.
  expectFailure(await second.post(userTurn(sessionId, "t1", "Take your time.")), 409, "SESSION_BUSY");
  const running = expectOk(await second.session(sessionId));
  expect(running.turns.map((turn) => [turn.turnId, turn.status])).toEqual([["t1", "running"]]);

  expect(expectFinal(await slow).primaryOutputText).toBe("The slow answer.");
  expect(harness.responseRequests()).toHaveLength(1);

  const retried = expectFinal(await second.post(userTurn(sessionId, "t2", "Me too!")));
  expect(retried.primaryOutputText).toBe("The second answer.");
  // The retry continued the conversation the first turn started.
  const [fromFirst, fromSecond] = harness.responseRequests();
  expect(fromSecond?.body).toMatchObject({ previous_response_id: fromFirst?.answer?.responseId });

  for (const client of [first, second]) {
    const summary = expectOk(await client.session(sessionId));
    expect(summary.turns.map((turn) => [turn.turnId, turn.sequence, turn.status])).toEqual([
      ["t1", 1, "completed"],
      ["t2", 2, "completed"],
    ]);
  }
}

/** Scenario 7: one turn per session at a time. */
export function oneTurnAtATimeScenarios(ctx: ScenarioContext): void {
  it("answers 409 SESSION_BUSY to a second request while a turn runs, then the first completes", async () => {
    await expectSerialized(ctx.harness, ctx.service, ctx.service);
  });
}
