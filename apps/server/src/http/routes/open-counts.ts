/** How many of something are open, by name, up to `max` each. */
export class OpenCounts {
  readonly #open = new Map<string, number>();

  constructor(private readonly max: number) {}

  full(name: string): boolean {
    return (this.#open.get(name) ?? 0) >= this.max;
  }

  /** Counts one more open; the answer counts it closed. */
  open(name: string): () => void {
    this.#open.set(name, (this.#open.get(name) ?? 0) + 1);
    return () => {
      const left = (this.#open.get(name) ?? 1) - 1;
      if (left === 0) this.#open.delete(name);
      else this.#open.set(name, left);
    };
  }
}
