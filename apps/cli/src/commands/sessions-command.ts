import { visibleJson } from "../terminal/visible.js";
import { type CliContext, EXIT } from "./cli-context.js";

/** How many sessions `aptix sessions` lists: the most recently active. */
const LISTED = 20;

/** `aptix sessions`: the caller's most recently active sessions, newest first. */
export async function sessionsCommand(context: CliContext): Promise<number> {
  const { client, terminal, options } = context;
  const answer = await client.sessions.list({ limit: LISTED });
  if (options.json)
    context.streams.stdout.write(`${visibleJson(answer.successful ? answer.result : answer)}\n`);
  if (!answer.successful) {
    for (const error of answer.errors)
      terminal.line(terminal.style("red", `${error.code}: ${error.message}`));
    return EXIT.failed;
  }
  if (options.json) return EXIT.done;
  for (const session of answer.result.sessions) {
    const status = session.lastTurnStatus ?? "no turns";
    const workspace = session.workspaceId === undefined ? "" : ` · ${session.workspaceId}`;
    terminal.line(
      terminal.compose`${terminal.style("bold", session.sessionId)} ${terminal.style("dim", `${session.updatedAt} · ${session.turnCount} turns · ${status}${workspace}`)}`,
    );
    if (session.title !== "") terminal.line(`  ${session.title}`);
  }
  if (answer.result.sessions.length === 0) terminal.line(terminal.style("dim", "no sessions"));
  return EXIT.done;
}
