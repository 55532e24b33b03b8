import { existsSync } from "node:fs";
import { type BrowserContext, chromium } from "playwright-core";

/**
 * Debian's Chromium package, which the browser tests drive (`.ci/run` installs it when it is missing), or the
 * build `CHROMIUM_PATH` names.
 */
const CHROMIUM_PATH = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

interface ChromiumOptions {
  /** A fresh profile directory, removed by the caller. */
  userDataDir: string;
  /** Host names Chromium resolves to 127.0.0.1: page origins that are other sites than the service's. */
  hosts?: readonly string[];
}

export interface Chromium {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Headless Chromium driven by playwright-core, without the browser download of Playwright's own: Debian's
 * package, with nothing running in the background that reaches the network. Throws, never skips, when it is
 * missing, saying how to install it.
 */
export async function launchChromium(options: ChromiumOptions): Promise<Chromium> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}: the browser tests drive Debian's package. Install it as ` +
        "root with `apt-get update && apt-get install -y chromium` (.ci/run does so when it is missing).",
    );
  }
  const hosts = options.hosts ?? [];
  const context = await chromium.launchPersistentContext(options.userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      ...(hosts.length > 0
        ? [`--host-resolver-rules=${hosts.map((host) => `MAP ${host} 127.0.0.1`).join(", ")}`]
        : []),
    ],
  });
  return { context, close: () => context.close() };
}
