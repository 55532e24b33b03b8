import type { AptixClient } from "@aptix/client";

/**
 * Runs a turn whose client tools read files from `workspace` (a stand-in for the IDE's files) and refuse
 * to patch them; returns the final answer.
 */
export async function runWithTools(
  client: AptixClient,
  sessionId: string,
  instruction: string,
  workspace: ReadonlyMap<string, string>,
  onText: (text: string) => void,
) {
  const answer = await client.runTurn({
    sessionId,
    instruction,
    tools: {
      read_file: ({ path }) => {
        const contents = workspace.get(String(path));
        // A throw is sent to the model as the call's errorMessage.
        if (contents === undefined) throw new Error(`${String(path)} does not exist`);
        return { contents };
      },
      apply_patch: () => {
        throw new Error("This workspace is read-only.");
      },
    },
    onTextDelta: (_delta, text) => onText(text),
    onTextReset: () => onText(""),
  });
  if (!answer.successful) throw new Error(answer.errors.map((error) => error.message).join("\n"));
  return answer.result;
}
