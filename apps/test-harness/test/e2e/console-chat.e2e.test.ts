/**
 * The console's New chat page in a real browser: a stock `useChat` on the service's `/v1/chat`, against the real
 * service on a scripted OpenAI server. A message streams; a server tool that asks first is approved from the page;
 * a client tool's card is answered by the user; Stop cancels a running turn. Each test saves a screenshot under
 * apps/test-harness/screenshots/ (gitignored).
 */

import { step } from "@aptix/testing-llm-servers";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  type ConsoleBrowser,
  E2E_CATALOG,
  expectOk,
  launchConsoleBrowser,
  startTestService,
  type TestService,
  waitFor,
  writeCatalog,
} from "../../src/e2e/index.js";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

/**
 * `create_file` asks first; `read_file` is a client tool, which the console's user answers by hand. A second
 * context starts its sessions in the review mode.
 */
const CHAT_CATALOG = {
  ...E2E_CATALOG,
  conversationContexts: [
    ...E2E_CATALOG.conversationContexts,
    { ...E2E_CATALOG.conversationContexts[0], id: "reviews", defaultMode: "review" },
  ],
  modes: [{ ...E2E_CATALOG.modes[0], tools: ["read_file", "create_file"] }, ...E2E_CATALOG.modes.slice(1)],
  serverTools: [{ name: "create_file", builtin: "create_file", approval: "always" }],
};

let browser: ConsoleBrowser;
let service: TestService;

beforeAll(async () => {
  browser = await launchConsoleBrowser();
  // Local mode: the page asks no key, and the chat's requests carry none.
  service = await startTestService({
    store: "postgres",
    env: { APTIX_API_KEYS: "", APTIX_CONFIG: await writeCatalog(CHAT_CATALOG) },
  });
});

afterAll(async () => {
  await browser?.close();
  await service?.close();
});

/** The New chat page, what went wrong on it kept. */
async function chatPage() {
  const { page, problems } = await browser.newPage(service.url);
  await page.goto(`${service.url}/console#/chat`);
  await page.getByRole("heading", { name: "New chat" }).waitFor();
  return { page, problems };
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByLabel("Message").fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}

/** The session the page chats in, read from its "Open the session" link. */
async function sessionOf(page: Page): Promise<string> {
  const href = await page.getByRole("link", { name: "Open the session" }).getAttribute("href");
  return decodeURIComponent(href?.split("/").at(-1) ?? "");
}

const shot = (page: Page, name: string) => browser.screenshot(page, `chat-${name}`);

describe("the console's chat", () => {
  it("streams an answer into the page and keeps it in a session", async () => {
    service.harness.enqueue(step.text(["Hello ", "from ", "the service."], { chunkDelayMs: 50 }));
    const { page, problems } = await chatPage();
    await send(page, "Say hello.");
    await page.getByText("Hello from the service.").waitFor();
    await shot(page, "streamed");
    const session = expectOk(await service.session(await sessionOf(page)));
    expect(session.turns.map((turn) => turn.status)).toEqual(["completed"]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("starts a chat in the conversation context chosen, showing the mode it starts in", async () => {
    service.harness.enqueue(step.text("Reviewing."));
    const { page, problems } = await chatPage();
    await page.getByText("Starts in mode General").waitFor();
    await page.getByLabel("Conversation context").selectOption("reviews");
    await page.getByText("Starts in mode Code Review").waitFor();
    await shot(page, "context");
    await send(page, "Review this.");
    await page.getByText("Reviewing.").waitFor();
    const session = expectOk(await service.session(await sessionOf(page)));
    expect(session).toMatchObject({ conversationContextId: "reviews", mode: "review" });
    expect(problems).toEqual([]);
    await page.close();
  });

  it("runs a server tool that asks first once the user approves it on the page", async () => {
    service.harness.enqueue(
      step.functionCalls({
        name: "create_file",
        callId: "call_create",
        arguments: {
          name: "notes.md",
          mimeType: "text/markdown",
          content: "# Notes",
          encoding: "utf8",
          description: null,
        },
      }),
      step.text("I wrote notes.md."),
    );
    const { page, problems } = await chatPage();
    await send(page, "Write notes.md");
    await page.getByRole("button", { name: "Approve" }).waitFor();
    await shot(page, "approval");
    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByText("I wrote notes.md.").waitFor();
    await page.getByRole("link", { name: "text/markdown file" }).waitFor();
    await shot(page, "approved");
    const session = expectOk(await service.session(await sessionOf(page)));
    expect(session.turns.map((turn) => turn.status)).toEqual(["completed"]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("sends the result a user types into a client tool's card", async () => {
    service.harness.enqueue(
      step.functionCalls({ name: "read_file", callId: "call_read", arguments: { path: "notes.md" } }),
      step.text("The notes are short."),
    );
    const { page, problems } = await chatPage();
    await send(page, "What do my notes say?");
    await page.getByLabel("Result").fill('"# Notes"');
    await shot(page, "client-tool");
    await page.getByRole("button", { name: "Send result" }).click();
    await page.getByText("The notes are short.").waitFor();
    // The model was sent what the user typed as the call's output.
    const body = service.harness.responseRequests().at(-1)?.body as {
      input: { call_id?: string; output?: string }[];
    };
    expect(body.input.filter((item) => item.call_id === "call_read").map((item) => item.output)).toContain(
      '"# Notes"',
    );
    expect(problems).toEqual([]);
    await page.close();
  });

  it("stops a running turn on the service", async () => {
    const asked = service.harness.responseRequests().length;
    service.harness.enqueue(step.text("Too late.", { delayMs: 60_000 }));
    const { page, problems } = await chatPage();
    await send(page, "Take your time.");
    await waitFor(
      () => service.harness.responseRequests().length > asked,
      "the provider to be called",
      30_000,
    );
    await page.getByRole("button", { name: "Stop" }).click();
    await page
      .getByRole("status")
      .getByText(/^Stopped/)
      .waitFor();
    const sessionId = await sessionOf(page);
    await expect
      .poll(async () => expectOk(await service.session(sessionId)).turns.map((turn) => turn.status))
      .toEqual(["cancelled"]);
    await shot(page, "stopped");
    expect(problems).toEqual([]);
    await page.close();
  });
});
