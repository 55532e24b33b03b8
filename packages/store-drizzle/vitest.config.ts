// A relative import, not `@aptix/tooling/vitest`: Vitest bundles relative imports of its config file, while a
// package import is left to Node, which cannot load the shared config's `.ts` file (ERR_UNKNOWN_FILE_EXTENSION).
import { fileURLToPath } from "node:url";
import { defineConfig, mergeConfig } from "vitest/config";
import { sharedVitestConfig } from "../../tooling/vitest.shared.js";

/** Core's scenario suite, rerun with this package's stores in place of the in-memory ones. */
function coreScenariosOn(store: "pglite" | "postgres") {
  return {
    ...sharedVitestConfig,
    test: {
      ...sharedVitestConfig.test,
      // Replaces the shared include (mergeConfig would add to it): only the scenarios, not core's other tests.
      include: ["test/scenarios/**/*.test.ts"],
      name: `core scenarios on ${store}`,
      root: fileURLToPath(new URL("../core", import.meta.url)),
      setupFiles: [fileURLToPath(new URL(`./test/scenario-stores/${store}.ts`, import.meta.url))],
    },
  };
}

// PGlite takes seconds to start (initdb in WebAssembly, CPU-bound) while the Postgres tests mostly wait on the
// server: two workers overlap the two even on a two-core machine.
export default defineConfig({
  test: {
    maxWorkers: 2,
    projects: [
      mergeConfig(sharedVitestConfig, { test: { name: "store-drizzle" } }),
      coreScenariosOn("pglite"),
      coreScenariosOn("postgres"),
    ],
  },
});
