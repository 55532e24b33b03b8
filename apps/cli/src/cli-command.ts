/**
 * The command the user runs the CLI with, for the hints that name a command to run: `pnpm aptix` from a checkout
 * (the dev entry sets APTIX_CLI_COMMAND), else `aptix`.
 */
export function cliCommand(env: NodeJS.ProcessEnv): string {
  return env.APTIX_CLI_COMMAND || "aptix";
}
