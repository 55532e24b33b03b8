import { defineConfig } from "drizzle-kit";

/** `pnpm --filter @aptix/store-drizzle db:generate` writes a migration for every change of `src/schema.ts`. */
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/schema.ts",
  out: "./drizzle",
});
