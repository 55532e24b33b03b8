import type { UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { everyCallAnswered } from "./every-call-answered.js";

type Part = UIMessage["parts"][number];

const assistant = (...parts: Part[]): UIMessage[] => [
  { id: "t1", role: "user", parts: [{ type: "text", text: "Go" }] },
  { id: "t1:a", role: "assistant", parts: [{ type: "step-start" }, ...parts] },
];

const clientCall = (state: "input-available" | "output-available"): Part =>
  ({
    type: "tool-read_file",
    toolCallId: "c1",
    state,
    input: { path: "a.md" },
    ...(state === "output-available" ? { output: "text" } : {}),
  }) as Part;

const approvalCall = (state: "approval-requested" | "approval-responded"): Part =>
  ({
    type: "tool-create_file",
    toolCallId: "c2",
    state,
    providerExecuted: true,
    input: {},
    approval: state === "approval-requested" ? { id: "c2" } : { id: "c2", approved: true },
  }) as Part;

describe("everyCallAnswered", () => {
  it("sends once a client call has its output", () => {
    expect(everyCallAnswered({ messages: assistant(clientCall("input-available")) })).toBe(false);
    expect(everyCallAnswered({ messages: assistant(clientCall("output-available")) })).toBe(true);
  });

  it("sends once an approval is answered", () => {
    expect(everyCallAnswered({ messages: assistant(approvalCall("approval-requested")) })).toBe(false);
    expect(everyCallAnswered({ messages: assistant(approvalCall("approval-responded")) })).toBe(true);
  });

  it("waits for both kinds when a step holds a client call and an approval", () => {
    const half = assistant(clientCall("output-available"), approvalCall("approval-requested"));
    expect(everyCallAnswered({ messages: half })).toBe(false);
    const both = assistant(clientCall("output-available"), approvalCall("approval-responded"));
    expect(everyCallAnswered({ messages: both })).toBe(true);
  });

  it("does not send for server tools the service ran itself, nor after a user message", () => {
    const ran = {
      ...(approvalCall("approval-responded") as object),
      state: "output-available",
      output: {},
    } as Part;
    expect(everyCallAnswered({ messages: assistant(ran) })).toBe(false);
    expect(everyCallAnswered({ messages: assistant(clientCall("output-available")).slice(0, 1) })).toBe(
      false,
    );
  });
});
