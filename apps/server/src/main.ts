import { constants } from "node:os";
import { ConfigError } from "./config/config-error.js";
import { configFileLines } from "./config/config-file-lines.js";
import { readServerEnv, type ServerEnv } from "./config/server-env.js";
import { type StdoutLog, stdoutLogger } from "./logging/stdout-logger.js";
import { startServer } from "./start-server.js";
import { startupFault } from "./wiring/startup-fault.js";

/** How long the last log lines may take to reach stdout before the process exits without them. */
const LAST_LINES_MS = 1_000;

/**
 * A configuration problem (one line per bad key) or a fault of the machine or database start-up cannot get past
 * (one line naming the cause and the fix) stops start-up with exit code 2, without a stack; anything else is a
 * bug, and shows its stack.
 */
function exitOnStartupFault(
  log: StdoutLog,
  error: unknown,
  context: { env?: ServerEnv; alsoWrong?: readonly string[] } = {},
): Promise<never> {
  const fault = context.env && startupFault(error, context.env);
  if (error instanceof ConfigError)
    for (const line of [...error.lines, ...(context.alsoWrong ?? [])]) log.logger.error(line);
  else if (fault) log.logger.error(fault);
  else throw error;
  log.exit(2, LAST_LINES_MS);
  // Settles never: the process ends once the lines are out, and start-up goes no further meanwhile.
  return new Promise<never>(() => {});
}

async function readEnv(): Promise<ServerEnv> {
  try {
    return readServerEnv(process.env);
  } catch (error) {
    // LOG_LEVEL may be among the bad variables: the problems are told at the default level.
    // The config file is checked now too: a bad environment and a bad file are told in one start, not two.
    const alsoWrong = error instanceof ConfigError ? await configFileLines(process.env) : [];
    return exitOnStartupFault(await stdoutLogger("info"), error, { alsoWrong });
  }
}

const env = await readEnv();
const log = await stdoutLogger(env.LOG_LEVEL);
const { logger } = log;

let closing = false;
const shutdown = (signal: NodeJS.Signals) => {
  if (closing) {
    // A second Ctrl-C: the person does not want to wait for running turns.
    logger.warn({ signal }, "second signal: exiting without waiting");
    log.exit(128 + constants.signals[signal], 0);
    return;
  }
  closing = true;
  logger.info({ signal }, "shutting down: letting running turns finish");
  // One deadline for the whole shutdown (requests, then MCP servers, the database, the trace exporter):
  // whatever hangs, the process ends within APTIX_SHUTDOWN_TIMEOUT_MS of the signal.
  const deadline = Date.now() + env.APTIX_SHUTDOWN_TIMEOUT_MS;
  setTimeout(() => {
    logger.error("shutdown did not finish in time: exiting");
    log.exit(1, 0);
  }, env.APTIX_SHUTDOWN_TIMEOUT_MS).unref();
  // A signal during start-up closes the server once it has started.
  starting
    .then((server) => server.close())
    .then(
      () => log.exit(0, Math.min(LAST_LINES_MS, Math.max(0, deadline - Date.now()))),
      (error: unknown) => {
        logger.error({ error: String(error) }, "shutdown failed");
        log.exit(1, LAST_LINES_MS);
      },
    );
};

// Before start-up begins: a signal sent while it runs (a process manager's, or a test's on a start-up line) stops
// the server cleanly once it has started, rather than killing the process half-started.
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
// A start-up that fails ends the process (exitOnStartupFault settles never), so `starting` holds a started server.
const starting = startServer(env, logger).catch((error: unknown) => exitOnStartupFault(log, error, { env }));
