/**
 * `pnpm start` stopped as a process manager stops it: SIGTERM to the `pnpm` process alone. The server under it
 * shuts down and nothing it started is left, listening or not; pnpm reports no failure.
 */
import { afterAll, expect, it, vi } from "vitest";
import { type ServerProcess, spawnServer } from "../../src/e2e/index.js";
import { alive, listening } from "../support/process-checks.js";

// `pnpm start` builds first: see pnpm-demo.e2e.test.ts.
const startTimeoutMs = 600_000;
vi.setConfig({ testTimeout: startTimeoutMs + 30_000 });

let server: ServerProcess | undefined;

afterAll(async () => {
  await server?.kill();
});

it("stops with its server on SIGTERM to pnpm, leaving nothing listening", async () => {
  server = await spawnServer({
    script: "start",
    env: { DATABASE_URL: "memory://", APTIX_API_KEYS: undefined, APTIX_CONFIG: undefined },
    startTimeoutMs,
  });
  const started = server.descendants();
  expect(started.length).toBeGreaterThanOrEqual(2);
  const port = Number(new URL(server.url).port);
  expect(await listening(port)).toBe(true);

  expect(await server.stop("SIGTERM")).toEqual({ code: 0, signal: null });
  expect(server.output()).not.toContain("ELIFECYCLE");
  expect(server.logs.at(-1)).toMatchObject({ message: "stopped" });
  expect(started.filter(alive)).toEqual([]);
  expect(await listening(port)).toBe(false);
});
