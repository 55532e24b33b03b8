import { defineConfig } from "vitest/config";

/** Test TypeScript sources directly: workspace packages export them under the `@aptix/source` condition. */
export const sharedVitestConfig = defineConfig({
  resolve: { conditions: ["@aptix/source"] },
  ssr: { resolve: { conditions: ["@aptix/source"] } },
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    environment: "node",
    // CPU-bound tests (the property tests' hundreds of runs) take several times longer on a busy 2-core machine
    // than on an idle one; 5 s, vitest's default, failed them there. Waits for events keep their own timeouts.
    testTimeout: 20_000,
  },
});
