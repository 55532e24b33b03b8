import type { SessionMessagesJson } from "@aptix/client";

type ToolCall = NonNullable<SessionMessagesJson["messages"][number]["toolCalls"]>[number];

/** The service's name for a call that asks the user to approve a server tool. */
const APPROVAL_TOOL = "aptix_approve";

/** A tool call as an expandable card: its arguments and its result or error; an approval says what it asked. */
export function ToolCallCard({ call }: { call: ToolCall }) {
  const approval = call.name === APPROVAL_TOOL ? approvalOf(call.argumentsJson) : undefined;
  const outcome =
    call.errorMessage !== undefined ? "error" : call.resultJson !== undefined ? "result" : "no answer";
  return (
    <details className={`tool-card tool-${outcome.replace(" ", "-")}`}>
      <summary>
        {approval ? `Approval: ${approval}` : `Tool ${call.name}`} · {outcome}
      </summary>
      <h3>Arguments</h3>
      <pre>{pretty(call.argumentsJson)}</pre>
      {call.resultJson !== undefined && (
        <>
          <h3>Result</h3>
          <pre>{pretty(call.resultJson)}</pre>
        </>
      )}
      {call.errorMessage !== undefined && (
        <>
          <h3>Error</h3>
          <pre>{call.errorMessage}</pre>
        </>
      )}
    </details>
  );
}

function approvalOf(argumentsJson: string): string | undefined {
  try {
    const { tool } = JSON.parse(argumentsJson) as { tool?: unknown };
    return typeof tool === "string" ? tool : undefined;
  } catch {
    return undefined;
  }
}

/** JSON text indented, or as it is when it is not JSON. */
export function pretty(json: string): string {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
}
