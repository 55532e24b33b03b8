import type { AptixClient } from "@aptix/client";
import type { CliOptions } from "../cli-options.js";
import type { Terminal, TerminalStreams } from "../terminal/terminal.js";

/** What every command gets: the parsed options, the client, the output and the process's streams. */
export interface CliContext {
  options: CliOptions;
  client: AptixClient;
  terminal: Terminal;
  streams: TerminalStreams & { stdin: NodeJS.ReadableStream & { isTTY?: boolean } };
}

/** The exit codes of `aptix` (docs: 0 done, 1 the turn failed, 2 usage error, 130 stopped by Ctrl-C). */
export const EXIT = { done: 0, failed: 1, usage: 2, interrupted: 130 } as const;
