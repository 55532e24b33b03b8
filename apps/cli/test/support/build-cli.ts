import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * Builds `@aptix/cli` and the packages it imports at run time (`@aptix/contracts`, `@aptix/client`) with their
 * own `build` scripts (tsc), in dependency order, so the tests run `dist/main.js` as npm would install it.
 */
export default function buildCli(): void {
  const root = fileURLToPath(new URL("../../../../", import.meta.url));
  execFileSync(
    "pnpm",
    ["--filter", "@aptix/contracts", "--filter", "@aptix/client", "--filter", "@aptix/cli", "run", "build"],
    { cwd: root, stdio: ["ignore", "ignore", "inherit"] },
  );
}
