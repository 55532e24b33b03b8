import type { CliContext } from "./cli-context.js";
import { printLastMessages } from "./last-messages.js";

/**
 * `--continue`: the context with the workspace's most recently active session (the session list filtered by the
 * workspace's id), or, when it has none yet, unchanged: a new session, said so.
 */
export async function latestSessionOf(context: CliContext): Promise<CliContext> {
  const { client, terminal, options } = context;
  const listed = await client.sessions.list({ limit: 1, workspaceId: options.workspaceId });
  if (!listed.successful) throw new Error(`cannot list sessions: ${listed.errors[0].message}`);
  const [latest] = listed.result.sessions;
  if (latest === undefined) {
    terminal.line(
      terminal.style("dim", `No session of workspace ${options.workspaceId} yet: starting a new one.`),
    );
    return context;
  }
  // A chat shows where the session stood; `run` keeps its output to the new answer (`aptix run … > answer.md`).
  if (options.command.name === "chat") await printLastMessages(terminal, client, latest.sessionId);
  return { ...context, options: { ...options, sessionId: latest.sessionId, sessionGiven: true } };
}
