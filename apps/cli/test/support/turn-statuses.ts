import { API_KEY } from "./aptix-server.js";

/** The statuses of a session's turns, oldest first, as the service reads them back (`GET /v1/sessions/:id`). */
export async function turnStatuses(serverUrl: string, sessionId: string): Promise<string[]> {
  const response = await fetch(`${serverUrl}/v1/sessions/${sessionId}`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  const summary = (await response.json()) as { result: { turns: Array<{ status: string }> } };
  return summary.result.turns.map((turn) => turn.status);
}
