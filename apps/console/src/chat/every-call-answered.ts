import { isToolUIPart, type UIMessage } from "ai";

/**
 * Sends again once every call of the last step has its answer: the results the user typed and the approvals the
 * user gave. The service takes a step's answers all together, so a step with both kinds waits for both.
 */
export function everyCallAnswered({ messages }: { messages: UIMessage[] }): boolean {
  const last = messages.at(-1);
  if (last?.role !== "assistant") return false;
  const step = last.parts.slice(last.parts.findLastIndex((part) => part.type === "step-start") + 1);
  const calls = step.filter(isToolUIPart);
  const answered = ["output-available", "output-error", "output-denied", "approval-responded"];
  return (
    calls.some((call) => !call.providerExecuted || call.state === "approval-responded") &&
    calls.every((call) => answered.includes(call.state))
  );
}
