import { describe, expect, it } from "vitest";
import type { TurnWrite } from "../../src/index.js";

const key = { principal: "alice", sessionId: "s1" };
const now = new Date(0);
const lease = { owner: "lease_1", durationMs: 1_000 };
const create = { conversationContextId: "default", agentContextId: null, mode: "general" };

// Checked by the type checker (`pnpm typecheck`): each `@ts-expect-error` fails it once the write typechecks.
describe("TurnWrite", () => {
  it("does not let a write mix what its guard excludes", () => {
    const writes: TurnWrite[] = [
      // @ts-expect-error A lease-guarded write claims nothing: it names its owner, not a lease to take.
      { guard: "lease", key, now, lease },
      // @ts-expect-error A lease-guarded write creates no session.
      { guard: "lease", key, now, owner: "lease_1", create },
      // @ts-expect-error A claim carries no LLM calls: only a running turn's write keeps them.
      { guard: "version", key, now, lease, expectVersion: 1, llmCalls: [] },
      // @ts-expect-error A write that creates the session expects no version.
      { guard: "create", key, now, lease, create, expectVersion: 1 },
      // @ts-expect-error An override starts no turn.
      { guard: "override", key, now, expectVersion: 1, insertTurn: undefined },
    ];
    expect(writes).toHaveLength(5);
  });
});
