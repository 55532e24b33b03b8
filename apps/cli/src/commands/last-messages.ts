import type { AptixClient, SessionMessagesJson } from "@aptix/client";
import type { Terminal } from "../terminal/terminal.js";

type SessionMessage = SessionMessagesJson["messages"][number];

/** How many of a session's last messages are shown, and how much of each. */
const SHOWN = 6;
const SHOWN_CHARS = 300;

/** The session's last messages (`GET …/messages`, paged to its end, keeping only the last few). */
async function lastMessages(client: AptixClient, sessionId: string): Promise<SessionMessage[]> {
  const kept: SessionMessage[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.sessions.messages(sessionId, { limit: 100, ...(cursor ? { cursor } : {}) });
    if (!page.successful) return kept;
    kept.push(...page.result.messages);
    kept.splice(0, Math.max(0, kept.length - SHOWN));
    cursor = page.result.nextCursor;
  } while (cursor !== undefined);
  return kept;
}

/**
 * Prints the session's last messages, so a user going on with it sees where it stood: each as `you:` or
 * `agent:` and its start (the model's text shown through the terminal's visible path, like any model text).
 */
export async function printLastMessages(
  terminal: Terminal,
  client: AptixClient,
  sessionId: string,
): Promise<void> {
  const messages = await lastMessages(client, sessionId);
  if (messages.length === 0) return;
  terminal.line(terminal.style("dim", "Last messages:"));
  for (const message of messages) {
    const who = terminal.style("bold", message.role === "user" ? "you" : "agent");
    const text = message.text ?? (message.error ? `(no answer: ${message.error.message})` : "");
    const oneLine = text.replace(/\s+/g, " ").trim();
    const shown = oneLine.length <= SHOWN_CHARS ? oneLine : `${oneLine.slice(0, SHOWN_CHARS)}…`;
    terminal.line(terminal.compose`${who}: ${shown}`);
  }
}
