import { LineReader } from "../terminal/line-reader.js";
import { type ChatControl, runChatCommand } from "./chat-commands.js";
import { type CliContext, EXIT } from "./cli-context.js";
import { jsonAnswer } from "./json-answer.js";
import { TurnRunner } from "./turn-runner.js";

/**
 * `aptix chat`: reads instructions line by line and runs each as a turn of the session, until the input ends
 * (Ctrl-D) or `/exit`; slash commands (`/help`, `/new`, `/sessions`, `/resume <id>`, `/compact`, …: chat-commands.ts) are answered here. Ctrl-C cancels
 * the running turn on the service and returns to the prompt; a second Ctrl-C, or one between turns, ends the
 * chat. A failed turn is shown and the chat goes on; the exit code is the last turn's.
 */
export async function chatCommand(context: CliContext): Promise<number> {
  const { options, terminal } = context;
  const reader = new LineReader(context.streams.stdin, terminal.out);
  let running: AbortController | undefined;
  // Ctrl-C cancels the running turn (on the server too); a second one, or one at the prompt, ends the chat.
  reader.onInterrupt = () => {
    if (running && !running.signal.aborted) running.abort(new Error("Stopped by the user (Ctrl-C)."));
    else reader.close();
  };
  let exitCode: number = EXIT.done;
  try {
    const runner = await TurnRunner.open(context, () => reader);
    terminal.line(
      terminal.style(
        "dim",
        `aptix chat · session ${options.sessionId} · workspace ${options.workspaceId} (${options.workspaceDir})\n` +
          "Type an instruction; /help lists the commands, /exit or Ctrl-D quits.",
      ),
    );
    const chat: ChatControl = {
      terminal,
      client: context.client,
      newSession: () => {
        runner.sessionId = crypto.randomUUID();
        return runner.sessionId;
      },
      resumeSession: (sessionId) => {
        runner.sessionId = sessionId;
      },
      sessionId: () => runner.sessionId,
      workspaceId: options.workspaceId,
    };
    for (;;) {
      const line = await reader.next(terminal.style("bold", "> "));
      if (line === null) break;
      if (line.trim() === "") continue;
      const command = await runChatCommand(line, chat);
      if (command === "exit") break;
      if (command === "done") continue;
      running = new AbortController();
      try {
        const instruction = typeof command === "object" ? command.send : line.trim();
        const { turnId, answer } = await runner.run(instruction, running.signal);
        exitCode = answer.successful ? EXIT.done : EXIT.failed;
        if (options.json) context.streams.stdout.write(`${jsonAnswer(runner.sessionId, turnId, answer)}\n`);
      } catch (error) {
        if (!running.signal.aborted) throw error;
        terminal.line(terminal.style("yellow", "Stopped."));
        exitCode = EXIT.failed;
      } finally {
        running = undefined;
      }
    }
    return exitCode;
  } finally {
    reader.close();
  }
}
