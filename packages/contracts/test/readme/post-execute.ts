import {
  type AgentExecuteRequest,
  AgentExecuteResultSchema,
  validateAgentExecuteRequest,
} from "@aptix/contracts";

/** Sends one request to the agent service, after checking it against the contract. */
export async function postExecute(
  baseUrl: string,
  request: AgentExecuteRequest,
  headers: Record<string, string> = {},
) {
  const checked = validateAgentExecuteRequest(request);
  // A request the contract refuses never leaves the IDE; the failure is the same 400 answer the server would give.
  if (!checked.successful) return checked;

  const response = await fetch(new URL("/v1/agent/execute", baseUrl), {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(checked.result),
  });
  // Every answer, whatever its HTTP status, is an InvokeResult<AgentExecuteResponse>.
  const answer = AgentExecuteResultSchema.safeParse(await response.json());
  if (!answer.success) throw new Error(`HTTP ${response.status}: the body is not an InvokeResult`);
  return answer.data;
}
