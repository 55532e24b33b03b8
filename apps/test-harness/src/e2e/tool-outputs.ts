import type { ScriptedOpenAI } from "@aptix/testing-llm-servers";

/** The tool outputs the model was sent in the harness's last Responses request, by call id. */
export function lastToolOutputs(
  harness: Pick<ScriptedOpenAI, "responseRequests">,
): Record<string, string | undefined> {
  const body = harness.responseRequests().at(-1)?.body as {
    input: Array<{ type?: string; call_id?: string; output?: string }>;
  };
  return Object.fromEntries(
    body.input
      .filter((item) => item.type === "function_call_output")
      .map((item) => [item.call_id, item.output]),
  );
}
