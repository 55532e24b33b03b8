// A relative import, not `@aptix/tooling/vitest`: Vitest bundles relative imports of its config file, while a
// package import is left to Node, which cannot load the shared config's `.ts` file (ERR_UNKNOWN_FILE_EXTENSION).
import { defineConfig, mergeConfig } from "vitest/config";
import { sharedVitestConfig } from "../../tooling/vitest.shared.js";

/** The end-to-end tests run the compiled `aptix` binary: the global setup builds it (and what it imports) first. */
export default mergeConfig(
  sharedVitestConfig,
  defineConfig({
    test: { globalSetup: ["test/support/build-cli.ts"] },
  }),
);
