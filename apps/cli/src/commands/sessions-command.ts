import type { AptixClient } from "@aptix/client";
import { plural } from "../terminal/plural.js";
import type { Terminal } from "../terminal/terminal.js";
import { visibleJson } from "../terminal/visible.js";
import { type CliContext, EXIT } from "./cli-context.js";

/** How many sessions `aptix sessions` (and chat's `/sessions`) lists: the most recently active. */
const LISTED = 20;

type SessionList = Awaited<ReturnType<AptixClient["sessions"]["list"]>>;

/** The caller's most recently active sessions, newest first: of one workspace when `workspaceId` is given. */
export function recentSessions(client: AptixClient, workspaceId?: string): Promise<SessionList> {
  return client.sessions.list({ limit: LISTED, ...(workspaceId === undefined ? {} : { workspaceId }) });
}

/** Prints a listing of sessions (or why there is none); answers whether it was listed. */
export function printSessions(terminal: Terminal, answer: SessionList): boolean {
  if (!answer.successful) {
    for (const error of answer.errors)
      terminal.line(terminal.style("red", `${error.code}: ${error.message}`));
    return false;
  }
  for (const session of answer.result.sessions) {
    const status = session.lastTurnStatus ?? "no turns";
    const workspace = session.workspaceId === undefined ? "" : ` · ${session.workspaceId}`;
    terminal.line(
      terminal.compose`${terminal.style("bold", session.sessionId)} ${terminal.style("dim", `${session.updatedAt} · ${plural(session.turnCount, "turn")} · ${status}${workspace}`)}`,
    );
    if (session.title !== "") terminal.line(`  ${session.title}`);
  }
  if (answer.result.sessions.length === 0) terminal.line(terminal.style("dim", "no sessions"));
  return true;
}

/** `aptix sessions`: the caller's most recently active sessions, newest first. */
export async function sessionsCommand(context: CliContext): Promise<number> {
  const { client, terminal, options } = context;
  const answer = await recentSessions(client);
  if (options.json) {
    context.streams.stdout.write(`${visibleJson(answer.successful ? answer.result : answer)}\n`);
    if (answer.successful) return EXIT.done;
  }
  return printSessions(terminal, answer) ? EXIT.done : EXIT.failed;
}
