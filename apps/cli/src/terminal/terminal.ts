import { styleText } from "node:util";

type Style = Parameters<typeof styleText>[0];

/** Where the CLI writes, and whether it may colour it. */
export interface TerminalStreams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

/**
 * The human-facing output: conversation text, tool lines, previews and prompts. With `--json` it goes to stderr
 * so that stdout carries only the JSON answer. Colour only on a terminal, and never with `NO_COLOR` set
 * (https://no-color.org) or `TERM=dumb`.
 */
export class Terminal {
  readonly out: NodeJS.WritableStream;
  readonly colour: boolean;
  #atLineStart = true;

  constructor(streams: TerminalStreams, options: { json: boolean }) {
    const out = options.json ? streams.stderr : streams.stdout;
    this.out = out;
    const env = streams.env;
    this.colour = (out as { isTTY?: boolean }).isTTY === true && !env.NO_COLOR && env.TERM !== "dumb";
  }

  style(format: Style, text: string): string {
    // `colour` already decided; styleText's own check would drop colour on a terminal whenever CI is set.
    return this.colour ? styleText(format, text, { validateStream: false }) : text;
  }

  /** Text as it streams in. */
  write(text: string): void {
    if (text === "") return;
    this.out.write(text);
    this.#atLineStart = text.endsWith("\n");
  }

  /** A line of its own: streamed text before it is ended first. */
  line(text = ""): void {
    this.endLine();
    this.out.write(`${text}\n`);
    this.#atLineStart = true;
  }

  /** Ends the streamed text's line, if one is open. */
  endLine(): void {
    if (!this.#atLineStart) this.out.write("\n");
    this.#atLineStart = true;
  }
}
