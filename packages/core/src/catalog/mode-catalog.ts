import type { Mode } from "./mode.js";

/** The modes a session can be in, by id (TUL-010). */
export class ModeCatalog {
  readonly #modes: Map<string, Mode>;

  constructor(modes: readonly Mode[]) {
    this.#modes = new Map(modes.map((mode) => [mode.id, mode]));
  }

  get ids(): string[] {
    return [...this.#modes.keys()];
  }

  has(id: string): boolean {
    return this.#modes.has(id);
  }

  /** Throws for an unknown id: catalogs are checked at start-up, so a miss here is a bug. */
  get(id: string): Mode {
    const mode = this.#modes.get(id);
    if (!mode) throw new Error(`mode ${JSON.stringify(id)} is not in the mode catalog`);
    return mode;
  }
}
