/**
 * Typos in the environment stop the server process before it creates anything: an `APTIX_*` variable it does not
 * read, and a `DATABASE_URL` whose scheme is misspelled (which once became an embedded database in a folder
 * `postgress:`). One line each, naming the variable meant, and exit code 2.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it, vi } from "vitest";
import { type LaunchedServer, launchServer } from "../../src/e2e/index.js";

// The child compiles the server with tsx before it reads its environment: seconds, more on a busy machine. It ends
// or says it listens, and the test waits for one or the other.
vi.setConfig({ testTimeout: 0 });

const children: LaunchedServer[] = [];

/** How the child ended; "listening" if it started instead (the typo passed), which fails the test at once. */
function ended(child: LaunchedServer) {
  const started = child
    .waitForLine((line) => line.message === "listening", 600_000)
    .then(() => "listening" as const)
    // Rejected when the child exits first: its exit status answers then.
    .catch(() => child.exited);
  return Promise.race([child.exited, started]);
}
let directory: string;

afterAll(async () => {
  await Promise.all(children.map((child) => child.kill()));
  if (directory) await rm(directory, { recursive: true, force: true });
});

it("stops with exit code 2 and one did-you-mean line on APTIX_PORT or a postgress:// DATABASE_URL", async () => {
  directory = await mkdtemp(join(tmpdir(), "aptix-typos-"));
  const launch = (env: Record<string, string>) => {
    const child = launchServer({ env: { APTIX_CONFIG: undefined, INIT_CWD: directory, ...env } });
    children.push(child);
    return child;
  };
  const port = launch({ APTIX_PORT: "abc", DATABASE_URL: "memory://" });
  const scheme = launch({ DATABASE_URL: "postgress://aptix:hunter2@127.0.0.1/aptix" });
  expect(await ended(port)).toEqual({ code: 2, signal: null });
  expect(await ended(scheme)).toEqual({ code: 2, signal: null });
  expect(port.logs.map((line) => [line.level, line.message])).toEqual([
    ["error", 'Invalid environment: APTIX_PORT: is not a variable the service reads (did you mean "PORT"?)'],
  ]);
  expect(scheme.logs.map((line) => [line.level, line.message])).toEqual([
    [
      "error",
      'Invalid environment: DATABASE_URL: "postgress:" is not a database URL this service opens (did you mean "postgres"?): use postgres://…, postgresql://…, memory:// or a directory path',
    ],
  ]);
  expect(JSON.stringify(scheme.logs)).not.toContain("hunter2");
  // Nothing was created: the URL taken for a path would have been a folder in the server's working directory.
  expect(existsSync(fileURLToPath(new URL("../../../server/postgress:", import.meta.url)))).toBe(false);
  expect(existsSync(join(directory, ".aptix"))).toBe(false);
});
