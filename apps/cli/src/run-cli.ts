import { statSync } from "node:fs";
import { AptixClient } from "@aptix/client";
import { acpCommand } from "./acp/acp-command.js";
import { parseCliOptions, UsageError } from "./cli-options.js";
import { cliVersion } from "./cli-version.js";
import { chatCommand } from "./commands/chat-command.js";
import { type CliContext, EXIT } from "./commands/cli-context.js";
import { describeFailure } from "./commands/describe-failure.js";
import { indexCommand } from "./commands/index-command.js";
import { latestSessionOf } from "./commands/latest-session.js";
import { runCommand } from "./commands/run-command.js";
import { sessionCommand } from "./commands/session-command.js";
import { sessionsCommand } from "./commands/sessions-command.js";
import { usageCommand } from "./commands/usage-command.js";
import { Terminal } from "./terminal/terminal.js";
import { visible } from "./terminal/visible.js";

export type CliStreams = CliContext["streams"];

/** Runs `aptix <argv>` and answers its exit code (0 done, 1 the turn failed, 2 usage error, 130 Ctrl-C). */
export async function runCli(argv: readonly string[], streams: CliStreams, cwd: string): Promise<number> {
  let context: CliContext;
  try {
    const options = parseCliOptions(argv, streams.env, cwd);
    const needsWorkspace = ["chat", "run", "index"].includes(options.command.name);
    if (needsWorkspace && !statSync(options.workspaceDir, { throwIfNoEntry: false })?.isDirectory()) {
      throw new UsageError(`The workspace ${options.workspaceDir} is not a directory.`);
    }
    const { passedOver } = options;
    if (needsWorkspace && passedOver !== undefined) {
      streams.stderr.write(
        `aptix: ${visible(`the git repository at ${passedOver.repository} is not the workspace (${passedOver.why}): the workspace is the current directory, ${options.workspaceDir}.`)}\n`,
      );
    }
    const terminal = new Terminal(streams, { json: options.json });
    const client = new AptixClient({
      baseUrl: options.url,
      ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
    });
    context = { options, client, terminal, streams };
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    // One line: the mistake, and where the commands are; the 30 lines of help would bury it.
    streams.stderr.write(`aptix: ${error.message} (aptix --help lists the commands and options)\n`);
    return EXIT.usage;
  }
  try {
    if (context.options.continueLatest) context = await latestSessionOf(context);
    const { command } = context.options;
    switch (command.name) {
      case "help":
        streams.stdout.write(command.usage);
        return EXIT.done;
      case "version":
        streams.stdout.write(`aptix ${cliVersion()}\n`);
        return EXIT.done;
      case "chat":
        return await chatCommand(context);
      case "run":
        return await runCommand(context, command.instruction);
      case "index":
        return await indexCommand(context);
      case "session":
        return await sessionCommand(context, command.sessionId);
      case "sessions":
        return await sessionsCommand(context);
      case "usage": {
        const { name: _name, ...query } = command;
        return await usageCommand(context, query);
      }
      case "acp":
        return await acpCommand(context);
    }
  } catch (error) {
    streams.stderr.write(`aptix: ${visible(describeFailure(error, context.options.url))}\n`);
    return EXIT.failed;
  }
}
