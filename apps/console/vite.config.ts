import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

// The server serves the build at /console (apps/server), so assets are asked for under that path.
export default defineConfig({
  base: "/console/",
  plugins: [react()],
  // The workspace packages' TypeScript sources, so the console builds without their own builds first.
  resolve: { conditions: ["@aptix/source", "module", "browser", "development|production"] },
  build: { outDir: "dist", emptyOutDir: true },
  test: { include: ["src/**/*.test.ts"], environment: "node" },
});
