import type { AvailableCommand, ContentBlock } from "@agentclientprotocol/sdk";
import type { AptixClient } from "@aptix/client";
import { plural } from "../terminal/plural.js";
import type { AcpSession } from "./acp-session.js";

/** The commands `aptix acp` offers the editor (`available_commands_update`): answered here, never by the model. */
export const ACP_COMMANDS: AvailableCommand[] = [
  {
    name: "compact",
    description: "Summarise the conversation now, so later turns send the model less",
  },
];

/** The command a prompt is, when it is one text block `/name` naming one of `ACP_COMMANDS`. */
export function acpCommandOf(prompt: readonly ContentBlock[]): string | undefined {
  const [block, ...rest] = prompt;
  if (block?.type !== "text" || rest.length > 0) return undefined;
  const name = /^\/(\S+)\s*$/.exec(block.text.trim())?.[1];
  return ACP_COMMANDS.some((command) => command.name === name) ? name : undefined;
}

/** Runs `/compact` on the service's session and tells the user what it did, as the agent's message. */
export async function runCompact(session: AcpSession, client: AptixClient): Promise<void> {
  const compacted = await client.sessions.compact(session.sessionId);
  if (!compacted.successful) {
    const errors = compacted.errors.map((error) => `${error.code}: ${error.message}`).join("\n");
    await session.updates.text(`Could not compact: ${errors}`);
  } else if (!compacted.result.compacted) {
    await session.updates.text("Nothing to compact: no turn since the last compaction.");
  } else {
    const { tokensBefore, tokensAfter } = compacted.result;
    await session.updates.text(`Compacted: ${tokensBefore} → ${plural(tokensAfter, "token")} of context.`);
  }
  await session.updates.flushed();
}
