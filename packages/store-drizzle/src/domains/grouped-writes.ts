/**
 * Writes that wait while one is being sent go together in the next: under load, one statement carries what many
 * callers asked for (the deltas of every turn streaming on the instance) rather than one statement each, and
 * alone a write goes at once. `write` answers one output per input, in order; when it throws, every input of
 * its group gets the error.
 */
export class GroupedWrites<Input, Output> {
  readonly #write: (inputs: Input[]) => Promise<Output[]>;
  #waiting: Array<{ input: Input; resolve: (output: Output) => void; reject: (error: unknown) => void }> = [];
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
        for (const { reject } of group) reject(error);
      }
    }
    this.#sending = false;
  }
}
