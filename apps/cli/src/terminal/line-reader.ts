import { createInterface, type Interface } from "node:readline";
import type { Styled } from "./terminal.js";

/**
 * Lines the user types, asked for one at a time. Lines that arrive before they are asked for (piped input) are
 * kept, not lost; `null` means the input ended (Ctrl-D, end of the pipe) or the question was withdrawn (its
 * signal aborted: Ctrl-C stopped the turn that asked). Ctrl-C calls `onInterrupt`.
 */
export class LineReader {
  readonly #readline: Interface;
  readonly #output: NodeJS.WritableStream;
  readonly #lines: string[] = [];
  #waiting: ((line: string | null) => void) | undefined;
  #closed = false;

  constructor(
    input: NodeJS.ReadableStream & { isTTY?: boolean },
    output: NodeJS.WritableStream & { isTTY?: boolean },
  ) {
    this.#output = output;
    this.#readline = createInterface({
      input,
      output,
      terminal: input.isTTY === true && output.isTTY === true,
    });
    this.#readline.on("line", (line) => {
      if (this.#waiting) this.#settle(line);
      else this.#lines.push(line);
    });
    this.#readline.on("close", () => {
      this.#closed = true;
      this.#settle(null);
    });
  }

  /** What Ctrl-C does while a line is being typed (default: end the input). */
  set onInterrupt(handler: () => void) {
    this.#readline.removeAllListeners("SIGINT");
    this.#readline.on("SIGINT", handler);
  }

  /**
   * Shows `prompt` and resolves with the next line, or `null` once the input has ended or `signal` aborts (at
   * once: a Ctrl-C at a question answers it, without waiting for Enter).
   */
  next(prompt: Styled, signal?: AbortSignal): Promise<string | null> {
    const queued = this.#lines.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.#closed || signal?.aborted) return Promise.resolve(null);
    return new Promise((resolve) => {
      const withdraw = () => {
        // The prompt's line is ended, so what is printed next starts on a line of its own.
        this.#output.write("\n");
        this.#settle(null);
      };
      signal?.addEventListener("abort", withdraw, { once: true });
      this.#waiting = (line) => {
        signal?.removeEventListener("abort", withdraw);
        resolve(line);
      };
      this.#readline.setPrompt(prompt.text);
      this.#readline.prompt();
    });
  }

  close(): void {
    this.#readline.close();
  }

  #settle(line: string | null): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.(line);
  }
}
