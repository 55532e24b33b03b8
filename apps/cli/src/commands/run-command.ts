import { LineReader } from "../terminal/line-reader.js";
import { type CliContext, EXIT } from "./cli-context.js";
import { jsonAnswer } from "./json-answer.js";
import { TurnRunner } from "./turn-runner.js";
import { TurnStopped } from "./turn-stopped.js";

/**
 * `aptix run "<instruction>"`: one turn; exit 0 when it completed, 1 when it failed, 130 when Ctrl-C stopped it
 * (the turn is cancelled on the service first, and one line says so).
 */
export async function runCommand(context: CliContext, instruction: string): Promise<number> {
  const { terminal, streams, options } = context;
  const stopping = new AbortController();
  const stop = () => {
    if (!stopping.signal.aborted) {
      stopping.abort(new Error("Stopped by the user (Ctrl-C)."));
      return;
    }
    // A second Ctrl-C does not wait for the service to answer the cancel (it may be unreachable).
    streams.stderr.write("aptix: stopped (Ctrl-C) without waiting for the service to cancel the turn.\n");
    process.exit(EXIT.interrupted);
  };
  // Ctrl-C reaches the process as SIGINT, or, while a question holds the terminal in raw mode, the line reader.
  process.on("SIGINT", stop);
  let reader: LineReader | undefined;
  const readerOf = () => {
    if (reader === undefined) {
      reader = new LineReader(streams.stdin, terminal.out);
      reader.onInterrupt = stop;
    }
    return reader;
  };
  try {
    const runner = await TurnRunner.open(context, readerOf);
    const { turnId, answer } = await runner.run(instruction, stopping.signal);
    if (options.json) {
      streams.stdout.write(`${jsonAnswer(options.sessionId, turnId, answer)}\n`);
    } else if (
      answer.successful ||
      (await context.client.getSession(options.sessionId).catch(() => undefined))?.successful
    ) {
      // How to go on with this session: `--session <id>`. A refused turn made no session to go on with.
      streams.stderr.write(`${terminal.style("dim", `session ${options.sessionId}`).text}\n`);
    }
    return answer.successful ? EXIT.done : EXIT.failed;
  } catch (error) {
    if (!(error instanceof TurnStopped)) throw error;
    terminal.endLine();
    const outcome = error.cancelled
      ? `turn ${error.turnId} is cancelled on the service`
      : `the service did not confirm the cancel of turn ${error.turnId}`;
    streams.stderr.write(`aptix: stopped (Ctrl-C): ${outcome}.\n`);
    return EXIT.interrupted;
  } finally {
    process.off("SIGINT", stop);
    reader?.close();
  }
}
