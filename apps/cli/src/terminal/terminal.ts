import { clearScreenDown, cursorTo } from "node:readline";
import { styleText } from "node:util";
import { visible } from "./visible.js";

type Style = Parameters<typeof styleText>[0];

/** Where the CLI writes, and whether it may colour it. */
export interface TerminalStreams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

/** Text the CLI composed itself, its colours included: printed as it is. */
export class Styled {
  constructor(readonly text: string) {}
}

/**
 * What the Terminal prints: a plain string is text from outside (the model, the service, a file name) and is
 * made `visible`; only `Styled` text, made by `style` and `compose`, reaches the terminal unchanged.
 */
export type Printable = string | Styled;

/** The text of a Printable as it may be written. */
function printed(text: Printable): string {
  return text instanceof Styled ? text.text : visible(text);
}

/**
 * The human-facing output: conversation text, tool lines, previews and prompts. With `--json` it goes to stderr
 * so that stdout carries only the JSON answer. Colour only on a terminal, and never with `NO_COLOR` set
 * (https://no-color.org) or `TERM=dumb`.
 */
/** The spinner's frames, and how often it turns. */
const SPINNER_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";
const SPINNER_MS = 80;

export class Terminal {
  readonly out: NodeJS.WritableStream;
  readonly colour: boolean;
  #atLineStart = true;
  /** The spinner shown while nothing is written, on a terminal only (see `waiting`). */
  #spinner: ReturnType<typeof setInterval> | undefined;
  /** `--json`: a script reads the output, so no spinner even on a terminal. */
  readonly #json: boolean;

  constructor(streams: TerminalStreams, options: { json: boolean }) {
    this.#json = options.json;
    const out = options.json ? streams.stderr : streams.stdout;
    this.out = out;
    const env = streams.env;
    this.colour = (out as { isTTY?: boolean }).isTTY === true && !env.NO_COLOR && env.TERM !== "dumb";
  }

  style(format: Style, text: Printable): Styled {
    // `colour` already decided; styleText's own check would drop colour on a terminal whenever CI is set.
    const plain = printed(text);
    return new Styled(this.colour ? styleText(format, plain, { validateStream: false }) : plain);
  }

  /** A template whose literal parts are the CLI's own and whose values are Printables: `compose\`${a} ${b}\``. */
  compose(parts: TemplateStringsArray, ...values: Printable[]): Styled {
    return new Styled(parts.reduce((text, part, index) => text + printed(values[index - 1] ?? "") + part));
  }

  /**
   * Shows a spinner at the start of a line until the next output, so a person at a terminal sees the agent is at
   * work (the model thinking, a tool running). Nothing when the output is not a terminal. Hand-written: spinner
   * libraries write to the stream themselves, and every write here must first take the spinner away.
   */
  waiting(): void {
    if (this.#spinner !== undefined || this.#json || !this.#atLineStart) return;
    if ((this.out as { isTTY?: boolean }).isTTY !== true) return;
    let frame = 0;
    const draw = () => {
      this.out.write(`\r${SPINNER_FRAMES[frame % SPINNER_FRAMES.length]} `);
      frame++;
    };
    draw();
    this.#spinner = setInterval(draw, SPINNER_MS);
    this.#spinner.unref();
  }

  /** Takes the spinner away, leaving the cursor where it was drawn. */
  #stopWaiting(): void {
    if (this.#spinner === undefined) return;
    clearInterval(this.#spinner);
    this.#spinner = undefined;
    this.out.write("\r\u001b[K");
  }

  /** Text as it streams in. */
  write(text: string): void {
    if (text === "") return;
    this.#stopWaiting();
    this.out.write(visible(text));
    this.#atLineStart = text.endsWith("\n");
  }

  /** A line of its own: streamed text before it is ended first. */
  line(text: Printable = ""): void {
    this.#stopWaiting();
    this.endLine();
    this.out.write(`${printed(text)}\n`);
    this.#atLineStart = true;
  }

  /** Clears a terminal's screen and puts the cursor at its top (nothing when the output is not a terminal). */
  clearScreen(): void {
    this.#stopWaiting();
    if ((this.out as { isTTY?: boolean }).isTTY !== true) return;
    cursorTo(this.out, 0, 0);
    clearScreenDown(this.out);
    this.#atLineStart = true;
  }

  /** Ends the streamed text's line, if one is open. */
  endLine(): void {
    this.#stopWaiting();
    if (!this.#atLineStart) this.out.write("\n");
    this.#atLineStart = true;
  }
}
