import { OpenCounts } from "./open-counts.js";

/** Usage reads one principal may have running at once on one instance (docs/http-api.md, Limits). */
export const MAX_USAGE_READS_PER_PRINCIPAL = 2;

/**
 * The usage reads running for each principal: a report sums up to a year of roll-ups, so one principal's
 * reads at once are capped, and cannot hold every pooled database connection another tenant's requests need.
 */
export class UsageReadSlots {
  readonly #running = new OpenCounts(MAX_USAGE_READS_PER_PRINCIPAL);

  /** Runs `read` in one of the principal's slots; undefined, without running it, when both are taken. */
  async run<T>(principal: string, read: () => Promise<T>): Promise<{ value: T } | undefined> {
    if (this.#running.full(principal)) return undefined;
    const done = this.#running.open(principal);
    try {
      return { value: await read() };
    } finally {
      done();
    }
  }
}
