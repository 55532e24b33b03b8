import { catalogWithModes, createTestAgent, responseOf, TEST_CATALOG, type TestAgent } from "./test-agent.js";

/**
 * A session `s` that agent `before` moved into mode `design` (turn t1, through `agent_change_mode`) and then
 * used for `laterTurns` more turns (t2, …, instruction "More"), and agent `after` on the same stores (PGlite or
 * Postgres when store-drizzle reruns the scenarios) whose configuration no longer has `design`: an operator
 * dropped the mode and a new server instance took over.
 */
export async function sessionInDroppedMode(laterTurns = 0): Promise<{ before: TestAgent; after: TestAgent }> {
  const withDesign = catalogWithModes({
    id: "design",
    displayName: "Design",
    instructions: "Design.",
    tools: [],
    toolChoice: null,
  });
  const before = await createTestAgent({ config: withDesign });
  before.provider.enqueue(
    {
      toolCalls: [
        { name: "agent_change_mode", arguments: { mode: "design", reason: "plan", branch: false } },
      ],
    },
    { text: "Designing." },
  );
  responseOf(await before.execute({ sessionId: "s", turnId: "t1", instruction: "Plan" }));
  for (let turn = 2; turn < 2 + laterTurns; turn++) {
    before.provider.enqueue({ text: "Still designing." });
    responseOf(await before.execute({ sessionId: "s", turnId: `t${turn}`, instruction: "More" }));
  }
  const after = await createTestAgent({ store: before.store, files: before.files, config: TEST_CATALOG });
  return { before, after };
}
