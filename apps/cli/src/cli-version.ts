import { readFileSync } from "node:fs";

/** The version of `@aptix/cli`, as the package.json published beside `dist/` says. */
export function cliVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return manifest.version;
}
