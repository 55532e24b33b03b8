import { defineConfig } from "vitest/config";
import { sharedVitestConfig } from "../../tooling/vitest.shared.js";

/** The tests that time the server, run after every other test (turbo's `test-alone`), one file at a time. */
export default defineConfig({
  ...sharedVitestConfig,
  test: { ...sharedVitestConfig.test, include: ["test/alone/**/*.test.ts"], fileParallelism: false },
});
