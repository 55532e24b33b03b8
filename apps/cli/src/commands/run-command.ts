import { LineReader } from "../terminal/line-reader.js";
import { type CliContext, EXIT } from "./cli-context.js";
import { jsonAnswer } from "./json-answer.js";
import { TurnRunner } from "./turn-runner.js";

/** `aptix run "<instruction>"`: one turn; exit 0 when it completed, 1 when it failed. */
export async function runCommand(context: CliContext, instruction: string): Promise<number> {
  let reader: LineReader | undefined;
  const readerOf = () => {
    reader ??= new LineReader(context.streams.stdin, context.terminal.out);
    return reader;
  };
  try {
    const runner = await TurnRunner.open(context, readerOf);
    const { turnId, answer } = await runner.run(instruction);
    if (context.options.json) {
      context.streams.stdout.write(`${jsonAnswer(context.options.sessionId, turnId, answer)}\n`);
    } else {
      // How to go on with this session: `--session <id>`.
      context.streams.stderr.write(
        `${context.terminal.style("dim", `session ${context.options.sessionId}`).text}\n`,
      );
    }
    return answer.successful ? EXIT.done : EXIT.failed;
  } finally {
    reader?.close();
  }
}
