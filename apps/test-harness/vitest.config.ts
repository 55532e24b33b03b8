// A relative import, not `@aptix/tooling/vitest`: Vitest bundles relative imports of its config file, while a
// package import is left to Node, which cannot load the shared config's `.ts` file (ERR_UNKNOWN_FILE_EXTENSION).
import { configDefaults, defineConfig } from "vitest/config";
import { sharedVitestConfig } from "../../tooling/vitest.shared.js";

// test/alone/ holds the tests that time the server (DESIGN's bounds for /healthz): `test-alone` runs them once
// every other test has finished, one file at a time, so no other test's load is what they measure.
export default defineConfig({
  ...sharedVitestConfig,
  test: { ...sharedVitestConfig.test, exclude: [...configDefaults.exclude, "test/alone/**"] },
});
