import type { Styled } from "../terminal/terminal.js";
import { visibleJson } from "../terminal/visible.js";
import { type CliContext, EXIT } from "./cli-context.js";
import { printLastMessages } from "./last-messages.js";

/** `aptix session <id>`: the session's mode, mode changes and turns. */
export async function sessionCommand(context: CliContext, sessionId: string): Promise<number> {
  const { client, terminal, options } = context;
  const answer = await client.getSession(sessionId);
  if (options.json)
    context.streams.stdout.write(`${visibleJson(answer.successful ? answer.result : answer)}\n`);
  if (!answer.successful) {
    for (const error of answer.errors)
      terminal.line(terminal.style("red", `${error.code}: ${error.message}`));
    return EXIT.failed;
  }
  if (options.json) return EXIT.done;
  const session = answer.result;
  terminal.line(
    terminal.compose`${terminal.style("bold", `Session ${session.sessionId}`)} · mode ${session.modeDisplayName} (${session.mode})`,
  );
  terminal.line(`created ${session.createdAt}, last changed ${session.updatedAt}`);
  for (const change of session.modeHistory) {
    terminal.line(
      `mode ${change.previousMode} → ${change.newMode} in turn ${change.turnId}: ${change.reason}`,
    );
  }
  for (const turn of session.turns) {
    const tokens = turn.usage
      ? ` · tokens ${turn.usage.inputTokens} in / ${turn.usage.outputTokens} out`
      : "";
    const error = turn.error ? ` · ${turn.error.code}: ${turn.error.message}` : "";
    terminal.line(
      terminal.compose`${String(turn.sequence).padStart(3)}. ${turn.turnId} ${statusOf(context, turn.status)} ${turn.createdAt}${tokens}${error}`,
    );
  }
  if (session.turns.length === 0) terminal.line(terminal.style("dim", "no turns"));
  else await printLastMessages(terminal, client, sessionId);
  return EXIT.done;
}

function statusOf({ terminal }: CliContext, status: string): Styled {
  if (status === "completed") return terminal.style("green", status);
  if (status === "failed" || status === "abandoned") return terminal.style("red", status);
  return terminal.style("yellow", status);
}
