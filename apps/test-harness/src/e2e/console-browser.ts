import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { launchChromium } from "./chromium.js";

/** Where the console's browser tests save their screenshots (gitignored), for a person to look at. */
const SCREENSHOTS = fileURLToPath(new URL("../../screenshots/", import.meta.url));

export interface ConsoleBrowser {
  /**
   * A page of the service at `origin` (not opened yet), with what went wrong on it kept: page errors, CSP
   * violations and requests to any other origin.
   */
  newPage(origin: string): Promise<{ page: Page; problems: string[] }>;
  /** Saves the whole page as `screenshots/console-<name>.png`. */
  screenshot(page: Page, name: string): Promise<void>;
  close(): Promise<void>;
}

/** Headless Chromium for the console's tests, on a fresh profile removed on close. */
export async function launchConsoleBrowser(): Promise<ConsoleBrowser> {
  await mkdir(SCREENSHOTS, { recursive: true });
  const profile = await mkdtemp(join(tmpdir(), "aptix-chromium-"));
  const browser = await launchChromium({ userDataDir: profile });
  return {
    async newPage(origin) {
      const page = await browser.context.newPage();
      await page.setViewportSize({ width: 1280, height: 860 });
      const problems: string[] = [];
      page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
      page.on("console", (message) => {
        if (/Content Security Policy/i.test(message.text())) problems.push(`CSP: ${message.text()}`);
      });
      page.on("request", (request) => {
        const url = request.url();
        if (!url.startsWith(`${origin}/`) && !url.startsWith("data:") && !url.startsWith("blob:")) {
          problems.push(`request elsewhere: ${url}`);
        }
      });
      return { page, problems };
    },
    async screenshot(page, name) {
      await page.screenshot({ path: join(SCREENSHOTS, `console-${name}.png`), fullPage: true });
    },
    async close() {
      await browser.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
