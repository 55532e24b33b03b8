import { AptixClient } from "@aptix/client";

/** Asks one question in a session and returns the answer's text; a failure is thrown with its code. */
export async function ask(baseUrl: string, apiKey: string, sessionId: string, question: string) {
  const client = new AptixClient({ baseUrl, apiKey });
  const answer = await client.execute({ sessionId, turnId: crypto.randomUUID(), instruction: question });
  if (!answer.successful) throw new Error(`${answer.errors[0].code}: ${answer.errors[0].message}`);
  if (answer.result.kind !== "final") throw new Error("The agent asked for client tools: use runTurn.");
  return answer.result.primaryOutputText;
}
