import type { Logger } from "pino";

/** How often the background check asks the database, and pings the MCP servers. */
export const READINESS_REFRESH_MS = 5_000;

/** What `/readyz` answers: when not ready, the parts that are down, by name only (no address, no driver text). */
export type Readiness = { ready: true } | { ready: false; reason: string };

export interface ReadinessSources {
  /** The database reachable and migrated; `reason` (which may name hosts) goes to the log only. */
  database(): Promise<{ ready: boolean; reason?: string }>;
  /** The MCP servers: `refresh` pings them in the background, `down` reads their connection state. */
  mcp: { refresh(): Promise<void>; down(): string[] };
}

/**
 * Readiness from a status a background check keeps (DESIGN §11): the database is asked every
 * READINESS_REFRESH_MS, the MCP servers are read from their connection state, so `/readyz` costs nothing and
 * answers alike under any load. Changes are logged with their detail.
 */
export class ReadinessMonitor {
  readonly #sources: ReadinessSources;
  readonly #logger: Logger;
  #database: { ready: boolean; reason?: string } = { ready: false, reason: "not checked yet" };
  #timer: ReturnType<typeof setInterval> | undefined;
  #checking: Promise<void> | undefined;
  #stopped = false;
  /** What was down at the last check, as logged; "" when all was up. */
  #lastDown = "";

  private constructor(sources: ReadinessSources, logger: Logger) {
    this.#sources = sources;
    this.#logger = logger;
  }

  /** Checks once (the server answers ready from its first request on), then every READINESS_REFRESH_MS. */
  static async start(sources: ReadinessSources, logger: Logger): Promise<ReadinessMonitor> {
    const monitor = new ReadinessMonitor(sources, logger);
    await monitor.#check();
    monitor.#timer = setInterval(() => {
      // One check at a time: a slow database piles nothing up.
      monitor.#checking ??= monitor.#check().finally(() => {
        monitor.#checking = undefined;
      });
    }, READINESS_REFRESH_MS);
    monitor.#timer.unref();
    return monitor;
  }

  status(): Readiness {
    if (this.#stopped) return { ready: false, reason: "shutting down" };
    const down = this.#down();
    return down.length === 0
      ? { ready: true }
      : { ready: false, reason: down.map((part) => `${part} is unavailable`).join("; ") };
  }

  /** Not ready from now on; the background check stops (waiting for one that runs). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#checking;
  }

  #down(): string[] {
    return [
      ...(this.#database.ready ? [] : ["database"]),
      ...this.#sources.mcp.down().map((name) => `MCP server ${JSON.stringify(name)}`),
    ];
  }

  async #check(): Promise<void> {
    const [database] = await Promise.all([
      this.#sources.database().catch((error: unknown) => ({ ready: false, reason: String(error) })),
      this.#sources.mcp.refresh(),
    ]);
    this.#database = database;
    // One line per change of what is down, with the database's own words, which callers never see.
    const down = this.#down();
    const key = down.join(", ");
    if (key === this.#lastDown) return;
    this.#lastDown = key;
    if (down.length === 0) this.#logger.info("ready");
    else this.#logger.warn({ down, ...(database.ready ? {} : { database: database.reason }) }, "not ready");
  }
}
