/** When a piece of work must stop: a walk checks it between entries and answers what it found so far. */
export class Deadline {
  readonly #end: number;

  constructor(milliseconds: number) {
    this.#end = performance.now() + milliseconds;
  }

  get expired(): boolean {
    return performance.now() >= this.#end;
  }
}
