import type { Logger } from "pino";

/** How often the background check asks the database, and pings the MCP servers. */
export const READINESS_REFRESH_MS = 5_000;

/**
 * What `/readyz` answers: when not ready, the parts that are down, by name only (no address, no driver text);
 * when ready, the parts that work by a slower path (`degraded`) if any.
 */
export type Readiness = { ready: true; degraded?: string[] } | { ready: false; reason: string };

/** What the listener check names when the store hears no notifications. */
const LISTENER = "turn listener";

export interface ReadinessSources {
  /** The database reachable and migrated; `reason` (which may name hosts) goes to the log only. */
  database(): Promise<{ ready: boolean; reason?: string }>;
  /** The MCP servers: `refresh` pings them in the background, `down` reads their connection state. */
  mcp: { refresh(): Promise<void>; down(): string[] };
  /**
   * Whether other instances' notifications (cancels, stream wakeups) are heard. Without them the service still
   * works, by polling (a cancel takes up to a poll), so it stays ready and names the listener as degraded.
   */
  listener(): Promise<boolean>;
}

/**
 * Readiness from a status a background check keeps (docs/security.md): the database is asked every
 * READINESS_REFRESH_MS, the MCP servers are read from their connection state, so `/readyz` costs nothing and
 * answers alike under any load. Changes are logged with their detail.
 */
export class ReadinessMonitor {
  readonly #sources: ReadinessSources;
  readonly #logger: Logger;
  #database: { ready: boolean; reason?: string } = { ready: false, reason: "not checked yet" };
  #listenerHeard = true;
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
    if (down.length > 0)
      return { ready: false, reason: down.map((part) => `${part} is unavailable`).join("; ") };
    return this.#listenerHeard ? { ready: true } : { ready: true, degraded: [LISTENER] };
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
    const [database, listenerHeard] = await Promise.all([
      this.#sources.database().catch((error: unknown) => ({ ready: false, reason: String(error) })),
      this.#sources.listener().catch(() => false),
      this.#sources.mcp.refresh(),
    ]);
    this.#database = database;
    if (listenerHeard !== this.#listenerHeard) {
      if (listenerHeard) this.#logger.info(`${LISTENER} hears notifications again`);
      else
        this.#logger.warn(
          `${LISTENER} hears no notifications: cancels reach other instances by polling (within 3 s), streams followed on other instances by polling`,
        );
    }
    this.#listenerHeard = listenerHeard;
    // One line per change of what is down, with the database's own words, which callers never see.
    const down = this.#down();
    const key = down.join(", ");
    if (key === this.#lastDown) return;
    this.#lastDown = key;
    if (down.length === 0) this.#logger.info("ready");
    else this.#logger.warn({ down, ...(database.ready ? {} : { database: database.reason }) }, "not ready");
  }
}
