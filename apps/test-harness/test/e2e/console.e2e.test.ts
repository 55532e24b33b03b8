/**
 * The console (`/console`) in a real browser: headless Chromium (Debian's package) against the real service on
 * a scripted OpenAI server. Each test saves a screenshot under apps/test-harness/screenshots/ (gitignored) for a
 * person to look at.
 */

import { readFile } from "node:fs/promises";
import { step } from "@aptix/testing-llm-servers";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  API_KEYS,
  type ConsoleBrowser,
  CREATE_FILE_CATALOG,
  expectContinuation,
  expectFailure,
  expectFinal,
  expectOk,
  launchConsoleBrowser,
  startTestService,
  TEST_MODEL,
  type TestService,
  toolContinuation,
  uniqueId,
  userTurn,
  waitFor,
  writeCatalog,
} from "../../src/e2e/index.js";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

let browser: ConsoleBrowser;
let service: TestService;
let local: TestService;
const sessionId = uniqueId("console");

beforeAll(async () => {
  browser = await launchConsoleBrowser();
  service = await startTestService({
    store: "postgres",
    env: { APTIX_CONFIG: await writeCatalog(CREATE_FILE_CATALOG) },
  });
  // One scripted provider for both: the services read its address from the environment.
  local = await startTestService({
    store: "postgres",
    harness: service.harness,
    env: { APTIX_API_KEYS: "" },
  });
  service.harness.enqueue(step.text("Paris is the capital of France."));
  expectFinal(await service.post(userTurn(sessionId, "t1", "What is the capital of France?")));
  service.harness.enqueue(step.text("About 2.1 million people live there."));
  expectFinal(await service.post(userTurn(sessionId, "t2", "How many people live there?")));
  // A client tool the user answers, then a server tool that makes a file.
  service.harness.enqueue(
    step.functionCalls({ name: "read_file", callId: "call_read", arguments: { path: "notes.md" } }),
    step.functionCalls({
      name: "create_file",
      callId: "call_create",
      arguments: {
        name: "summary.txt",
        mimeType: "text/plain",
        content: "Paris.",
        encoding: null,
        description: null,
      },
    }),
    step.text("I wrote the summary to summary.txt."),
  );
  expectContinuation(await service.post(userTurn(sessionId, "t3", "Summarise notes.md into a file.")));
  const read = { toolCallId: "call_read", resultJson: JSON.stringify("Paris is lovely.") };
  expectFinal(await service.post(toolContinuation(sessionId, "t3", [read])));
});

afterAll(async () => {
  await browser?.close();
  await Promise.all([service?.close(), local?.close()]);
});

const consolePage = (origin: string) => browser.newPage(origin);

async function signIn(page: Page): Promise<void> {
  await page.goto(`${service.url}/console`);
  await page.getByLabel("API key").fill(API_KEYS.alice);
  await page.getByRole("button", { name: "Use key" }).click();
  await page.getByRole("heading", { name: "Sessions" }).waitFor();
}

const shot = (page: Page, name: string) => browser.screenshot(page, name);

describe("the console", () => {
  it("is served from the service with a CSP of its own origin alone", async () => {
    const response = await fetch(`${service.url}/console`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-security-policy")).toBe("default-src 'self'");
    const html = await response.text();
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${service.url}${script}`);
    expect(asset.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect((await fetch(`${service.url}/console/assets/nothing.js`)).status).toBe(404);
  });

  it("asks for an API key, refuses a wrong one, and keeps the right one in this tab's sessionStorage only", async () => {
    const { page, problems } = await consolePage(service.url);
    await page.goto(`${service.url}/console`);
    await page.getByLabel("API key").fill("not-a-key");
    await page.getByRole("button", { name: "Use key" }).click();
    await page
      .getByRole("alert")
      .getByText(/UNAUTHORIZED/)
      .waitFor();
    await shot(page, "key-entry");
    await page.getByLabel("API key").fill(API_KEYS.alice);
    await page.getByRole("button", { name: "Use key" }).click();
    await page.getByRole("link", { name: "What is the capital of France?" }).waitFor();
    const stored = await page.evaluate(
      "({ session: Object.values(sessionStorage), local: Object.values(localStorage) })",
    );
    expect(stored).toEqual({ session: [API_KEYS.alice], local: [] });
    for (const link of ["Sessions", "New chat", "Usage", "Service"]) {
      await page.getByRole("link", { name: link, exact: true }).waitFor();
    }
    expect(problems).toEqual([]);
    await page.close();
  });

  it("asks for no key in local mode", async () => {
    const { page, problems } = await consolePage(local.url);
    await page.goto(`${local.url}/console`);
    await page.getByRole("heading", { name: "Sessions" }).waitFor();
    expect(await page.getByLabel("API key").count()).toBe(0);
    await shot(page, "local-mode");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("renders every page with no page error and no request to another origin", async () => {
    const { page, problems } = await consolePage(service.url);
    await signIn(page);
    const pages: [string, string, string][] = [
      ["sessions", "#/sessions", "Sessions"],
      ["session", `#/sessions/${sessionId}`, `Session ${sessionId}`],
      ["chat", "#/chat", "New chat"],
      ["usage", "#/usage", "Usage"],
      ["service", "#/service", "Service"],
    ];
    for (const [name, hash, heading] of pages) {
      await page.goto(`${service.url}/console${hash}`);
      await page.getByRole("heading", { name: heading, exact: true }).waitFor();
      await page.waitForLoadState("networkidle");
      await shot(page, name);
    }
    expect(problems).toEqual([]);
    await page.close();
  });

  it("shows what the service runs with on the Service page, as GET /v1/service says it", async () => {
    const response = await fetch(`${service.url}/v1/service`, {
      headers: { authorization: `Bearer ${API_KEYS.alice}` },
    });
    const described = (await response.json()) as {
      result: { version: string; limits: { maxLlmCallsPerRequest: number; maxRunningTurns: number } };
    };
    expect(described.result).toMatchObject({
      store: "postgres",
      providers: expect.arrayContaining(["openai"]),
      conversationContexts: [
        { id: "default", provider: "openai", model: "gpt-e2e", defaultModeId: "general" },
      ],
      modes: expect.arrayContaining([
        { id: "general", displayName: "General", tools: ["read_file", "create_file"] },
      ]),
    });
    // Nothing secret: no key and no database URL.
    expect(JSON.stringify(described)).not.toMatch(/postgres:\/\/|Bearer|sk-/);
    const { page, problems } = await consolePage(service.url);
    await signIn(page);
    await page.goto(`${service.url}/console#/service`);
    await page.getByRole("heading", { name: "Limits" }).waitFor();
    const { version, limits } = described.result;
    await page.getByText(version, { exact: true }).waitFor();
    await page.getByText("PostgreSQL", { exact: true }).waitFor();
    await page.getByRole("row", { name: "default openai gpt-e2e" }).waitFor();
    await page.getByRole("row", { name: /^General general read_file, create_file/ }).waitFor();
    await page.getByRole("row", { name: `LLM calls a request ${limits.maxLlmCallsPerRequest}` }).waitFor();
    await page.getByRole("row", { name: `Turns running at once ${limits.maxRunningTurns}` }).waitFor();
    await page.waitForLoadState("networkidle");
    await shot(page, "service-described");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("searches every session's title through the service, a page of matches at a time, and shows a session's conversation", async () => {
    // More sessions than a page, all newer than the one searched for: it is on no first page but the search's.
    const fillers = Array.from({ length: 21 }, (_, index) => `Filler chat ${index}`);
    for (const [index, instruction] of fillers.entries()) {
      service.harness.enqueue(step.text("Noted."));
      expectFinal(await service.post(userTurn(uniqueId(`console-filler-${index}`), "t1", instruction)));
    }
    const { page, problems } = await consolePage(service.url);
    await signIn(page);
    await page.getByRole("link", { name: fillers[20] }).waitFor();
    expect(await page.getByRole("link", { name: "What is the capital of France?" }).count()).toBe(0);
    const rows = page.getByRole("table").locator("tbody tr");
    await page.getByLabel("Search titles").fill("FILLER CHAT");
    await page.getByRole("link", { name: fillers[1], exact: true }).waitFor();
    expect(await rows.count()).toBe(20);
    await page.getByRole("button", { name: "Next page" }).click();
    await page.getByRole("link", { name: fillers[0], exact: true }).waitFor();
    expect(await rows.count()).toBe(1);
    expect(await page.getByRole("button", { name: "Next page" }).isDisabled()).toBe(true);
    await shot(page, "search-page-2");
    await page.getByLabel("Search titles").fill("capital");
    await page.getByRole("link", { name: "What is the capital of France?" }).waitFor();
    expect(await rows.count()).toBe(1);
    await shot(page, "search");
    await page.getByRole("link", { name: "What is the capital of France?" }).click();
    await page.getByText("Paris is the capital of France.").waitFor();
    await page.getByText("About 2.1 million people live there.").waitFor();
    expect(problems).toEqual([]);
    await page.close();
  });

  it("shows a turn's tool calls as cards with their arguments and results, and its files as links", async () => {
    // The server's run keeps its start: after the call that asked for it started, before the next one did.
    const { llmCalls, toolExecutions } = expectOk(await service.trace(sessionId, "t3"));
    const [run] = toolExecutions;
    expect(run?.name).toBe("create_file");
    const startOf = (at: string | undefined) => Date.parse(at ?? "");
    const [, asked, next] = llmCalls;
    expect(startOf(run?.startedAt)).toBeGreaterThanOrEqual(startOf(asked?.startedAt));
    expect(startOf(run?.startedAt)).toBeLessThanOrEqual(startOf(next?.startedAt));
    const { page, problems } = await consolePage(service.url);
    await signIn(page);
    await page.goto(`${service.url}/console#/sessions/${sessionId}`);
    await page.getByText("Tool read_file · result").click();
    await page.getByText('"path": "notes.md"').waitFor();
    await page.getByText('"Paris is lovely."').waitFor();
    await page.getByText("Tool create_file · result").click();
    // The file route wants the key: the page fetches the file with it and hands it over as a download.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "summary.txt" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("summary.txt");
    expect(await readFile(await download.path(), "utf8")).toBe("Paris.");
    await page.getByText("Trace", { exact: true }).nth(2).click();
    await page.getByText(/^Tool create_file · ok/).waitFor();
    await shot(page, "tool-calls");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("shows a turn's LLM call in its trace with its model and tokens, and its composed request on demand", async () => {
    const trace = await service.trace(sessionId, "t1");
    const [call] = expectOk(trace).llmCalls;
    const usage = call?.response?.usage as { inputTokens: number; outputTokens: number };
    const { page, problems } = await consolePage(service.url);
    await signIn(page);
    await page.goto(`${service.url}/console#/sessions/${sessionId}`);
    await page.getByText("Trace", { exact: true }).first().click();
    const format = (tokens: number) => new Intl.NumberFormat("en").format(tokens);
    await page
      .getByText(`LLM ${TEST_MODEL} · ${format(usage.inputTokens)} in / ${format(usage.outputTokens)} out`)
      .waitFor();
    await page.getByRole("button", { name: "Composed request" }).first().click();
    await page.getByLabel("Composed request").getByText(`"model": "${TEST_MODEL}"`).waitFor();
    await shot(page, "trace");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("shows the same usage in its chart and its table as /v1/usage answers", async () => {
    const byDay = await service.get<{
      buckets: { key: string; inputTokens: number; outputTokens: number }[];
    }>("/v1/usage");
    const { page, problems } = await consolePage(service.url);
    await signIn(page);
    await page.goto(`${service.url}/console#/usage`);
    const table = page.getByRole("table", { name: "Usage by day and model" });
    await table.waitFor();
    const headers = await table.getByRole("columnheader").allTextContents();
    expect(headers).toEqual(["Day", "Model", "Input tokens", "Output tokens", "Cost (USD)"]);
    const rows = await table
      .locator("tbody tr")
      .evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "")),
      );
    const number = (text: string | undefined) => Number((text ?? "").replaceAll(",", ""));
    const days = expectOk(byDay).buckets.filter((bucket) => bucket.inputTokens + bucket.outputTokens > 0);
    expect(days.length).toBeGreaterThan(0);
    for (const bucket of days) {
      const ofDay = rows.filter((row) => row[0] === bucket.key);
      expect(ofDay.map((row) => row[1])).toEqual([TEST_MODEL]);
      expect(ofDay.reduce((sum, row) => sum + number(row[2]), 0)).toBe(bucket.inputTokens);
      expect(ofDay.reduce((sum, row) => sum + number(row[3]), 0)).toBe(bucket.outputTokens);
    }
    // The chart drew its bars: some of its canvas is painted.
    const painted = await page.evaluate(`(() => {
      const canvas = document.querySelector(".chart canvas");
      const { data } = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height);
      return data.filter((value, index) => index % 4 === 3 && value > 0).length;
    })()`);
    expect(painted).toBeGreaterThan(0);
    await page
      .getByRole("table", { name: "Top sessions by cost" })
      .getByRole("link", { name: sessionId })
      .waitFor();
    await shot(page, "usage-table");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("stops a running turn from the session page", async () => {
    const slow = uniqueId("console-stop");
    service.harness.enqueue(step.text("Too late.", { delayMs: 60_000 }));
    const asked = service.harness.responseRequests().length;
    const waiting = service.post(userTurn(slow, "t1", "Take your time."));
    await waitFor(
      () => service.harness.responseRequests().length > asked,
      "the provider to be called",
      30_000,
    );
    const { page, problems } = await consolePage(service.url);
    await signIn(page);
    await page.goto(`${service.url}/console#/sessions/${slow}`);
    await page.getByRole("button", { name: "Stop" }).click();
    await page.getByRole("status").getByText("Stopped.").waitFor();
    expectFailure(await waiting, 409, "TURN_CANCELLED");
    const session = await service.session(slow);
    expect(expectOk(session).turns.map((turn) => turn.status)).toEqual(["cancelled"]);
    await page.getByText("cancelled").first().waitFor();
    await shot(page, "stopped");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("compacts a session, showing where, and deletes one once the user confirms it", async () => {
    const doomed = uniqueId("console-delete");
    service.harness.enqueue(step.text("Noted."));
    expectFinal(await service.post(userTurn(doomed, "t1", "Remember the number 7.")));
    const { page, problems } = await consolePage(service.url);
    await signIn(page);
    await page.goto(`${service.url}/console#/sessions/${doomed}`);
    service.harness.enqueue(step.text("The user asked to remember 7."));
    await page.getByRole("button", { name: "Compact" }).click();
    await page.getByRole("status").getByText("Compacted.").waitFor();
    await page.getByText(/^Conversation compacted \(manual\)/).waitFor();
    await shot(page, "compacted");
    await page.getByRole("button", { name: "Delete", exact: true }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Keep it" }).click();
    expect((await service.session(doomed)).status).toBe(200);
    await page.getByRole("button", { name: "Delete", exact: true }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete session" }).click();
    await page.getByRole("heading", { name: "Sessions" }).waitFor();
    expectFailure(await service.session(doomed), 404, "SESSION_NOT_FOUND");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("forks a session at a turn and opens the fork, which holds the turns before it and names its source", async () => {
    const { page, problems } = await consolePage(service.url);
    await signIn(page);
    await page.goto(`${service.url}/console#/sessions/${sessionId}`);
    await page.getByText("How many people live there?").waitFor();
    // The second turn's: the fork holds the first turn alone.
    await page.getByRole("button", { name: "Fork from here" }).nth(1).click();
    await page.getByText(`${sessionId} before turn t2`).waitFor();
    const forkId = /^Session (.+)$/.exec(
      (await page.getByRole("heading", { level: 1 }).textContent()) ?? "",
    )?.[1];
    expect(forkId).toBeDefined();
    expect(forkId).not.toBe(sessionId);
    await page.getByText("Paris is the capital of France.").waitFor();
    expect(await page.getByText("How many people live there?").count()).toBe(0);
    expect(await page.getByRole("button", { name: "Fork from here" }).count()).toBe(1);
    const fork = expectOk(await service.session(forkId as string));
    expect(fork.forkedFrom).toEqual({ sessionId, turnId: "t2" });
    expect(fork.turns.map((turn) => turn.turnId)).toEqual(["t1"]);
    await page.getByRole("link", { name: sessionId }).waitFor();
    await shot(page, "forked");
    expect(problems).toEqual([]);
    await page.close();
  });
});
