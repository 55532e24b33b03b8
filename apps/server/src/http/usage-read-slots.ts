/** Usage reads one principal may have running at once on one instance (docs/http-api.md, Limits). */
export const MAX_USAGE_READS_PER_PRINCIPAL = 2;

/**
 * The usage reads running for each principal: a report sums up to a year of roll-ups, so one principal's
 * reads at once are capped, and cannot hold every pooled database connection another tenant's requests need.
 */
export class UsageReadSlots {
  readonly #running = new Map<string, number>();

  /** Runs `read` in one of the principal's slots; undefined, without running it, when both are taken. */
  async run<T>(principal: string, read: () => Promise<T>): Promise<{ value: T } | undefined> {
    const running = this.#running.get(principal) ?? 0;
    if (running >= MAX_USAGE_READS_PER_PRINCIPAL) return undefined;
    this.#running.set(principal, running + 1);
    try {
      return { value: await read() };
    } finally {
      const left = (this.#running.get(principal) ?? 1) - 1;
      if (left === 0) this.#running.delete(principal);
      else this.#running.set(principal, left);
    }
  }
}
