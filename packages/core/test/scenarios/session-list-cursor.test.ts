import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createTestAgent, PRINCIPAL, responseOf, resultOf } from "../support/test-agent.js";

/** A cursor's id part that no session id can be: empty, too long, or holding a character ids never hold. */
const notAnIdentifier = fc.oneof(
  fc.constant(""),
  fc.constant("a".repeat(129)),
  fc
    .tuple(
      fc.string({ maxLength: 6 }),
      fc.constantFrom("\u0000", " ", "/", "%", "\uD83D", "\u{1F4C4}", "é", "\n"),
      fc.string({ maxLength: 6 }),
    )
    .map((parts) => parts.join("")),
);

describe("the session list's cursor", () => {
  it("refuses an id part that is no identifier with VALIDATION_FAILED naming `cursor`, before the store is asked", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "One." }, { text: "Two." });
    for (const sessionId of ["s-1", "s-2"]) {
      responseOf(await agent.execute({ sessionId, turnId: "t1", instruction: "Hi" }));
    }
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: 2 ** 40 }), notAnIdentifier, async (ms, id) => {
        const page = await agent.service.listSessions(PRINCIPAL, { limit: 1, cursor: `${ms}.${id}` });
        expect(page).toMatchObject({
          successful: false,
          errors: [{ code: "VALIDATION_FAILED", details: { fields: [{ path: "cursor" }] } }],
        });
      }),
      { numRuns: 50 },
    );
    // The cursor it answers pages on.
    const first = resultOf(await agent.service.listSessions(PRINCIPAL, { limit: 1 }));
    expect(first.nextCursor).toMatch(/^\d+\.s-2$/);
    const second = resultOf(
      await agent.service.listSessions(PRINCIPAL, { limit: 1, cursor: first.nextCursor ?? "" }),
    );
    expect(second.sessions.map((session) => session.sessionId)).toEqual(["s-1"]);
  });
});
