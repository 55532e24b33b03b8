import { connectionFailure } from "../store-unavailable.js";

/** A caller's input, and how it is told what became of it. */
interface Waiting<Input, Output> {
  input: Input;
  resolve: (output: Output) => void;
  reject: (error: unknown) => void;
}

/**
 * Writes that wait while one is being sent go together in the next: under load, one statement carries what many
 * callers asked for (the deltas of every turn streaming on the instance) rather than one statement each, and
 * alone a write goes at once. `write` answers one output per input, in order, and writes all of its inputs or
 * none (one statement). When a group's write throws, each of its inputs is written again alone: one caller's
 * row the database refuses fails that caller only, never the others that happened to share its statement.
 */
export class GroupedWrites<Input, Output> {
  readonly #write: (inputs: Input[]) => Promise<Output[]>;
  #waiting: Array<Waiting<Input, Output>> = [];
  #sending = false;

  constructor(write: (inputs: Input[]) => Promise<Output[]>) {
    this.#write = write;
  }

  add(input: Input): Promise<Output> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ input, resolve, reject });
      if (!this.#sending) void this.#send();
    });
  }

  async #send(): Promise<void> {
    this.#sending = true;
    while (this.#waiting.length > 0) {
      const group = this.#waiting;
      this.#waiting = [];
      try {
        const outputs = await this.#write(group.map(({ input }) => input));
        for (const [index, { resolve }] of group.entries()) resolve(outputs[index] as Output);
      } catch (error) {
        // A database that cannot be reached refuses every row alike: writing each again would only multiply
        // the statements an outage fails.
        if (group.length === 1 || connectionFailure(error)) for (const { reject } of group) reject(error);
        else await Promise.all(group.map((waiting) => this.#writeAlone(waiting)));
      }
    }
    this.#sending = false;
  }

  async #writeAlone({ input, resolve, reject }: Waiting<Input, Output>): Promise<void> {
    try {
      const [output] = await this.#write([input]);
      resolve(output as Output);
    } catch (error) {
      reject(error);
    }
  }
}
