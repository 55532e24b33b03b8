import type { AptixClient } from "@aptix/client";
import { plural } from "../terminal/plural.js";
import type { Terminal } from "../terminal/terminal.js";
import { printSessions, recentSessions } from "./sessions-command.js";

/** What a chat command may act on: the chat it was typed in. */
export interface ChatControl {
  terminal: Terminal;
  client: AptixClient;
  /** Moves the chat on to a new session, whose id it answers: the next instruction is its first turn. */
  newSession(): string;
  /** Moves the chat on to the session `sessionId`: the next instruction is its next turn. */
  resumeSession(sessionId: string): void;
  /** The session the next instruction goes to. */
  sessionId(): string;
  /** The chat's workspace: `/sessions` lists its sessions. */
  workspaceId: string;
}

type CommandOutcome = "exit" | { send: string } | undefined;

/** Prints an answer's errors, as every command does. */
function printErrors(terminal: Terminal, errors: readonly { code: string; message: string }[]): undefined {
  for (const error of errors) terminal.line(terminal.style("red", `${error.code}: ${error.message}`));
  return undefined;
}

interface ChatCommand {
  name: string;
  /** The name of the argument it needs, if it takes one (`/resume <id>`). */
  argument?: string;
  /** The argument may be left out (`/sessions [all]`). */
  optional?: boolean;
  summary: string;
  /** `"exit"` ends the chat; `{ send }` sends that instruction to the agent as the next turn. */
  run(argument: string, chat: ChatControl): Promise<CommandOutcome> | CommandOutcome;
}

const usageOf = (command: ChatCommand) =>
  `/${command.name}${command.argument === undefined ? "" : command.optional ? ` [${command.argument}]` : ` <${command.argument}>`}`;

/** The chat's slash commands, answered by the CLI itself: none of them reaches the model. */
const COMMANDS: ChatCommand[] = [
  {
    name: "help",
    summary: "list these commands",
    run: (_argument, { terminal }) => {
      terminal.line("Commands (any other line is an instruction for the agent):");
      for (const command of COMMANDS) terminal.line(`  ${usageOf(command).padEnd(14)} ${command.summary}`);
      terminal.line(`  ${"Ctrl-C".padEnd(14)} stop the running turn; between turns, quit`);
      return undefined;
    },
  },
  {
    name: "new",
    summary: "start a new session: the agent starts afresh",
    run: (_argument, chat) => {
      chat.terminal.line(chat.terminal.style("dim", `session ${chat.newSession()}`));
      return undefined;
    },
  },
  {
    name: "clear",
    summary: "clear the screen and start a new session",
    run: (_argument, chat) => {
      chat.terminal.clearScreen();
      chat.terminal.line(chat.terminal.style("dim", `session ${chat.newSession()}`));
      return undefined;
    },
  },
  {
    name: "sessions",
    argument: "all",
    optional: true,
    summary: "list this workspace's most recently active sessions; /sessions all: every workspace's",
    run: async (argument, { terminal, client, workspaceId }) => {
      if (argument !== "" && argument !== "all") {
        terminal.line(terminal.style("red", "/sessions takes no argument but all. Nothing was sent."));
        return undefined;
      }
      printSessions(terminal, await recentSessions(client, argument === "all" ? undefined : workspaceId));
      return undefined;
    },
  },
  {
    name: "resume",
    argument: "id",
    summary: "go on with the session <id> (as --session does)",
    run: async (sessionId, chat) => {
      const { terminal } = chat;
      // Asked first, so a mistyped id is told here, not by a turn that would start a new session under it.
      const session = await chat.client.getSession(sessionId);
      if (!session.successful) {
        for (const error of session.errors)
          terminal.line(terminal.style("red", `${error.code}: ${error.message}`));
        return undefined;
      }
      chat.resumeSession(sessionId);
      terminal.line(
        terminal.style("dim", `session ${sessionId} · ${plural(session.result.turns.length, "turn")}`),
      );
      return undefined;
    },
  },
  {
    name: "compact",
    summary: "summarise the conversation now, so later turns send the model less",
    run: async (_argument, { terminal, client, sessionId }) => {
      const compacted = await client.sessions.compact(sessionId());
      if (!compacted.successful) {
        for (const error of compacted.errors)
          terminal.line(terminal.style("red", `${error.code}: ${error.message}`));
      } else if (!compacted.result.compacted) {
        terminal.line(terminal.style("dim", "Nothing to compact: no turn since the last compaction."));
      } else {
        const { tokensBefore, tokensAfter } = compacted.result;
        terminal.line(
          terminal.style("dim", `Compacted: ${tokensBefore} → ${plural(tokensAfter, "token")} of context.`),
        );
      }
      return undefined;
    },
  },
  {
    name: "retry",
    summary: "answer the last instruction again: the old answer is set aside, the agent no longer sees it",
    run: async (_argument, { terminal, client, sessionId }) => {
      const session = await client.getSession(sessionId());
      if (!session.successful) return printErrors(terminal, session.errors);
      const last = session.result.turns.at(-1);
      const messages = await client.sessions.messages(sessionId(), { limit: 100, include: "superseded" });
      if (!messages.successful) return printErrors(terminal, messages.errors);
      const instruction = messages.result.messages.findLast(
        (message) => message.role === "user" && message.turnId === last?.turnId,
      )?.text;
      if (last === undefined || instruction === undefined) {
        terminal.line(terminal.style("red", "No instruction to answer again in this session."));
        return undefined;
      }
      const rewound = await client.rewind({ sessionId: sessionId(), beforeTurnId: last.turnId });
      if (!rewound.successful) return printErrors(terminal, rewound.errors);
      terminal.line(terminal.style("dim", `again: ${instruction}`));
      return { send: instruction };
    },
  },
  {
    name: "fork",
    summary: "go on in a copy of this session (its id is printed); this one stays as it is",
    run: async (_argument, chat) => {
      const { terminal } = chat;
      const newSessionId = crypto.randomUUID();
      const forked = await chat.client.fork({ sessionId: chat.sessionId(), newSessionId });
      if (!forked.successful) return printErrors(terminal, forked.errors);
      chat.resumeSession(newSessionId);
      terminal.line(
        terminal.style("dim", `session ${newSessionId} · forked from ${forked.result.forkedFrom?.sessionId}`),
      );
      return undefined;
    },
  },
  { name: "exit", summary: "quit (as Ctrl-D does)", run: () => "exit" },
];

/**
 * Answers a line typed in chat when it is a slash command (`/name`, then its argument): `"exit"` when it ends
 * the chat, `"done"` when it was answered here, `"instruction"` when the line is not a command and goes to the
 * agent, `{ send }` when the command sends an instruction of its own (`/retry`). An unknown or mistyped command
 * is refused here, never sent to the model.
 */
export async function runChatCommand(
  line: string,
  chat: ChatControl,
): Promise<"exit" | "done" | "instruction" | { send: string }> {
  const match = /^\/(\S*)\s*(.*)$/s.exec(line.trim());
  if (!match) return "instruction";
  const [, name = "", argument = ""] = match;
  const { terminal } = chat;
  const refuse = (why: string) => {
    terminal.line(terminal.style("red", `${why} Nothing was sent; /help lists the commands.`));
    return "done" as const;
  };
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (!command) return refuse(`Unknown command /${name}.`);
  if (command.argument === undefined && argument !== "")
    return refuse(`${usageOf(command)} takes no argument.`);
  if (command.argument !== undefined && argument === "" && command.optional !== true)
    return refuse(`${usageOf(command)} needs its ${command.argument}.`);
  const outcome = await command.run(argument, chat);
  return outcome === undefined ? "done" : outcome;
}
