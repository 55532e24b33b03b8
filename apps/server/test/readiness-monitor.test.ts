import { afterEach, describe, expect, it, vi } from "vitest";
import { READINESS_REFRESH_MS, ReadinessMonitor } from "../src/health/readiness-monitor.js";
import { capturedLog } from "./captured-log.js";

/** A database and MCP servers whose state the test sets, counting how often they are asked. */
function sources() {
  const state = {
    database: { ready: true } as { ready: boolean; reason?: string },
    down: [] as string[],
    listenerHeard: true as boolean | "throws",
  };
  const asked = { database: 0, refresh: 0 };
  return {
    state,
    asked,
    sources: {
      database: async () => {
        asked.database++;
        return state.database;
      },
      mcp: {
        refresh: async () => {
          asked.refresh++;
        },
        down: () => state.down,
      },
      listener: async () => {
        if (state.listenerHeard === "throws") throw new Error("listen: connection refused");
        return state.listenerHeard;
      },
    },
  };
}

const { logger, lines } = capturedLog();

afterEach(() => {
  vi.useRealTimers();
  lines.length = 0;
});

describe("ReadinessMonitor", () => {
  it("answers from the last background check, names what is down without its detail, and logs each change once", async () => {
    vi.useFakeTimers();
    const { state, asked, sources: from } = sources();
    const monitor = await ReadinessMonitor.start(from, logger);
    expect(asked).toEqual({ database: 1, refresh: 1 });
    for (let call = 0; call < 100; call++) expect(monitor.status()).toEqual({ ready: true });
    expect(asked).toEqual({ database: 1, refresh: 1 });

    state.database = {
      ready: false,
      reason: "The database is unreachable: connect ECONNREFUSED 10.0.0.7:5432",
    };
    state.down = ["docs"];
    await vi.advanceTimersByTimeAsync(READINESS_REFRESH_MS);
    expect(monitor.status()).toEqual({
      ready: false,
      reason: 'database is unavailable; MCP server "docs" is unavailable',
    });
    await vi.advanceTimersByTimeAsync(READINESS_REFRESH_MS);
    expect(lines).toEqual([
      {
        time: expect.any(String),
        level: "warn",
        message: "not ready",
        down: ["database", 'MCP server "docs"'],
        database: "The database is unreachable: connect ECONNREFUSED 10.0.0.7:5432",
      },
    ]);

    state.database = { ready: true };
    state.down = [];
    await vi.advanceTimersByTimeAsync(READINESS_REFRESH_MS);
    expect(monitor.status()).toEqual({ ready: true });
    expect(lines.at(-1)).toEqual({ time: expect.any(String), level: "info", message: "ready" });
    await monitor.stop();
  });

  it("answers shutting down once stopped, and checks no more", async () => {
    vi.useFakeTimers();
    const { asked, sources: from } = sources();
    const monitor = await ReadinessMonitor.start(from, logger);
    await vi.advanceTimersByTimeAsync(READINESS_REFRESH_MS);
    expect(asked.database).toBe(2);
    await monitor.stop();
    expect(monitor.status()).toEqual({ ready: false, reason: "shutting down" });
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(10 * READINESS_REFRESH_MS);
    expect(asked).toEqual({ database: 2, refresh: 2 });
  });

  it("stays ready when the turn listener hears nothing, naming it as degraded, and logs each change once", async () => {
    vi.useFakeTimers();
    const { state, sources: from } = sources();
    const monitor = await ReadinessMonitor.start(from, logger);
    state.listenerHeard = false;
    await vi.advanceTimersByTimeAsync(READINESS_REFRESH_MS);
    expect(monitor.status()).toEqual({ ready: true, degraded: ["turn listener"] });
    state.listenerHeard = "throws";
    await vi.advanceTimersByTimeAsync(READINESS_REFRESH_MS);
    expect(monitor.status()).toEqual({ ready: true, degraded: ["turn listener"] });
    expect(lines.map((line) => [line.level, line.message])).toEqual([
      [
        "warn",
        "turn listener hears no notifications: cancels reach other instances by polling (within 3 s), streams followed on other instances by polling",
      ],
    ]);
    state.listenerHeard = true;
    await vi.advanceTimersByTimeAsync(READINESS_REFRESH_MS);
    expect(monitor.status()).toEqual({ ready: true });
    expect(lines.at(-1)).toMatchObject({ level: "info", message: "turn listener hears notifications again" });
    await monitor.stop();
  });
});
