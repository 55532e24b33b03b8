/**
 * CORS from a real browser: headless Chromium (Debian's package) loads a page that runs `@aptix/client`, bundled for
 * the browser, from an origin of its own and calls the real service on another. The service lists one page origin
 * in APTIX_CORS_ORIGINS: that page runs a streamed turn against the scripted OpenAI server, and a page of an
 * unlisted origin is refused by the browser itself. The page origins are names (`app.test`, `other.test`) that
 * Chromium resolves to 127.0.0.1, so they are other sites, as a web app calling a local service would be.
 */

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AptixClient } from "@aptix/client";
import { step } from "@aptix/testing-llm-servers";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  API_KEYS,
  type Chromium,
  launchChromium,
  type PageServer,
  startPageServer,
  startTestService,
  type TestService,
} from "../../src/e2e/index.js";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

/** What a test page exposes: the client, as the bundle exports it. */
type PageGlobals = typeof globalThis & { AptixClient: typeof AptixClient };

let pages: PageServer;
let browser: Chromium;
let profile: string;
const services: TestService[] = [];

const listed = () => `http://app.test:${pages.port}`;
const unlisted = () => `http://other.test:${pages.port}`;

beforeAll(async () => {
  pages = await startPageServer();
  profile = await mkdtemp(join(tmpdir(), "aptix-chromium-"));
  browser = await launchChromium({ userDataDir: profile, hosts: ["app.test", "other.test"] });
});

afterAll(async () => {
  await browser?.close();
  await Promise.all(services.map((service) => service.close()));
  await pages?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
});

/** A page of `origin` with the client loaded. */
async function clientPage(origin: string): Promise<Page> {
  const page = await browser.context.newPage();
  await page.goto(`${origin}/`);
  await page.waitForFunction(() => "AptixClient" in globalThis);
  return page;
}

/** Streams one turn from the page; its text, its result, and the session read back, or the error it threw. */
function streamTurn(
  page: Page,
  baseUrl: string,
  apiKey: string | undefined,
  ids: { sessionId: string; turnId: string },
) {
  return page.evaluate(
    async ({ baseUrl, apiKey, ids }) => {
      const client = new (globalThis as PageGlobals).AptixClient({ baseUrl, ...(apiKey ? { apiKey } : {}) });
      try {
        let text = "";
        let result: unknown;
        for await (const event of client.stream({ ...ids, instruction: "Say hello." })) {
          if (event.type === "output_text.delta") text += event.delta;
          if (event.type === "result") result = event.result;
        }
        const session = await client.getSession(ids.sessionId);
        return { text, result, session };
      } catch (error) {
        return { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
      }
    },
    { baseUrl, apiKey, ids },
  );
}

describe.each<{ mode: string; apiKey: string | undefined; env: Record<string, string> }>([
  { mode: "with API keys", apiKey: API_KEYS.alice, env: {} },
  { mode: "in local mode", apiKey: undefined, env: { APTIX_API_KEYS: "" } },
])("a browser page calling the service $mode", ({ apiKey, env }) => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService({ store: "postgres", env: { ...env, APTIX_CORS_ORIGINS: listed() } });
    services.push(service);
  });

  it("runs a streamed turn from a page of a listed origin, preflight included", async () => {
    service.harness.enqueue(step.text("Hello from the service."));
    const page = await clientPage(listed());
    const outcome = await streamTurn(page, service.url, apiKey, {
      sessionId: "browser-s1",
      turnId: "browser-t1",
    });
    expect(outcome).toMatchObject({
      text: "Hello from the service.",
      result: { successful: true, result: { kind: "final", primaryOutputText: "Hello from the service." } },
      session: { successful: true, result: { sessionId: "browser-s1" } },
    });
    // The browser asked first: a JSON POST is no simple request.
    const preflights = service.logs.filter((line) => line.message === "request" && line.method === "OPTIONS");
    expect(preflights).toContainEqual(expect.objectContaining({ path: "/v1/agent/execute", status: 204 }));
    await page.close();
  });

  it("is refused by the browser from a page of an origin not listed, and no turn runs", async () => {
    const posts = () =>
      service.logs.filter((line) => line.message === "request" && line.method === "POST").length;
    const [asked, posted] = [service.harness.responseRequests().length, posts()];
    const page = await clientPage(unlisted());
    const outcome = await streamTurn(page, service.url, apiKey, {
      sessionId: "browser-s2",
      turnId: "browser-t1",
    });
    // fetch rejects as a network error: the page learns nothing of the answer.
    expect(outcome).toEqual({ error: expect.stringMatching(/^TypeError: Failed to fetch/) });
    // The preflight was refused, so the POST itself was never sent.
    expect(posts()).toBe(posted);
    expect(service.harness.responseRequests()).toHaveLength(asked);
    await page.close();
  });
});

describe("the API reference page", () => {
  it("renders /docs from the service alone: every request it makes goes to the service", async () => {
    const [service] = services;
    if (!service) throw new Error("no service started");
    const page = await browser.context.newPage();
    const requested: string[] = [];
    page.on("request", (request) => requested.push(request.url()));
    await page.goto(`${service.url}/docs`);
    await page.getByText("Run a user turn, or continue one with client tool results").first().waitFor();
    expect(requested).toContain(`${service.url}/openapi.json`);
    const elsewhere = requested.filter(
      (url) => !url.startsWith(`${service.url}/`) && !url.startsWith("data:") && !url.startsWith("blob:"),
    );
    expect(elsewhere).toEqual([]);
    await page.close();
  });

  // Scalar's cloud (its AI chat, MCP and SDK generation, its deploy toolbar) cannot work offline, and a service
  // in local mode needs no key: the page offers neither.
  it.each([
    { mode: "with API keys", index: 0, asksForKey: true },
    { mode: "in local mode", index: 1, asksForKey: false },
  ])(
    "shows no cloud buttons $mode, asks for a key only when one is needed, and / leads to it",
    async ({ index, asksForKey }) => {
      const service = services[index];
      if (!service) throw new Error("no service started");
      const page = await browser.context.newPage();
      for (const start of ["/", "/docs/"]) {
        await page.goto(`${service.url}${start}`);
        // Scalar adds the section shown as a fragment.
        expect(page.url().split("#")[0]).toBe(`${service.url}/docs`);
      }
      await page.getByText("Run a user turn, or continue one with client tool results").first().waitFor();
      for (const cloud of ["Ask AI", "Generate SDK", "Generate MCP", "Deploy"]) {
        expect(await page.getByText(cloud).count()).toBe(0);
      }
      expect(await page.getByText("Bearer Token").count()).toBe(asksForKey ? 1 : 0);
      await page.close();
    },
  );
});
