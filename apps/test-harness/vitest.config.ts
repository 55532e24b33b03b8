// A relative import, not `@aptix/tooling/vitest`: Vitest bundles relative imports of its config file, while a
// package import is left to Node, which cannot load the shared config's `.ts` file (ERR_UNKNOWN_FILE_EXTENSION).
import { configDefaults, defineConfig } from "vitest/config";
import { sharedVitestConfig } from "../../tooling/vitest.shared.js";

// test/alone/ holds the tests that time the server (the bounds docs/security.md sets for /healthz): `test-alone` runs them once
// every other test has finished, one file at a time, so no other test's load is what they measure.
// Vitest runs one file at a time on two cores (a worker per core but one). These files are independent (each its
// own sessions, schemas, ports and child processes) and spend most of their time waiting on servers, child
// processes and PGlite's child initdb, so three at once overlap the waits.
export default defineConfig({
  ...sharedVitestConfig,
  test: {
    ...sharedVitestConfig.test,
    exclude: [...configDefaults.exclude, "test/alone/**"],
    maxWorkers: 3,
  },
});
