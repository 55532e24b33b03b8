import { defineConfig } from "vitest/config";

/** Test TypeScript sources directly: workspace packages export them under the `@aptix/source` condition. */
export const sharedVitestConfig = defineConfig({
  resolve: { conditions: ["@aptix/source"] },
  ssr: { resolve: { conditions: ["@aptix/source"] } },
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    environment: "node",
  },
});
