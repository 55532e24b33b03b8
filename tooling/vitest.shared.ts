import { defineConfig } from "vitest/config";

/** Test TypeScript sources directly: workspace packages export them under the `@aptix/source` condition. */
export const sharedVitestConfig = defineConfig({
  resolve: { conditions: ["@aptix/source"] },
  ssr: { resolve: { conditions: ["@aptix/source"] } },
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    environment: "node",
    // These guard against a hang; they time nothing. On a busy 2-core machine CPU-bound tests (property tests,
    // PGlite's start, migrations) take several times longer than on an idle one, and shorter limits failed them
    // there. Waits for events inside a test keep their own, generous, timeouts.
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
