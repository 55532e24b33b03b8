/**
 * The React example of docs/web-apps.md, as the page shows it, bundled by esbuild with the real `@ai-sdk/react`
 * and `ai` and run in headless Chromium (Debian's package) from an origin of its own against the real service on
 * Postgres and the scripted OpenAI server: a message streams in, the browser's own tool runs in `onToolCall` and its
 * output goes back to the model, a server tool that asks first runs once the user clicks Approve, and a reload
 * shows the conversation from the service's messages.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { step } from "@aptix/testing-llm-servers";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  API_KEYS,
  type Chromium,
  E2E_CATALOG,
  lastToolOutputs,
  launchChromium,
  type PageApp,
  type PageServer,
  startPageServer,
  startTestService,
  type TestService,
  uniqueId,
  writeCatalog,
} from "../../src/e2e/index.js";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

const HERE = dirname(fileURLToPath(import.meta.url));
const DOC = join(HERE, "..", "..", "..", "..", "docs", "web-apps.md");

/** The catalog the example's text names: `get_local_time` runs in the browser, `create_file` asks first. */
const CATALOG = {
  ...E2E_CATALOG,
  modes: [
    { ...E2E_CATALOG.modes[0], tools: ["read_file", "get_local_time", "create_file"] },
    ...E2E_CATALOG.modes.slice(1),
  ],
  clientTools: [
    ...E2E_CATALOG.clientTools,
    {
      name: "get_local_time",
      description: "The user's local date and time, from their browser.",
      parameters: { type: "object", properties: {}, required: [], additionalProperties: false },
      strict: true,
    },
  ],
  serverTools: [{ name: "create_file", builtin: "create_file", approval: "always" }],
};

/** The doc's first `tsx` block, its service URL and key set to this service's. */
async function docExample(serviceUrl: string): Promise<string> {
  const doc = await readFile(DOC, "utf8");
  const example = /```tsx\n([\s\S]*?)```/.exec(doc)?.[1];
  if (example === undefined) throw new Error(`${DOC} has no tsx example`);
  const url = 'const APTIX_URL = "http://localhost:8787";';
  const key = 'const APTIX_KEY = "replace-with-your-api-key";';
  if (!example.includes(url) || !example.includes(key))
    throw new Error("the example no longer sets APTIX_URL and APTIX_KEY");
  return example
    .replace(url, `const APTIX_URL = ${JSON.stringify(serviceUrl)};`)
    .replace(key, `const APTIX_KEY = ${JSON.stringify(API_KEYS.alice)};`);
}

/** The example as a web app ships it: one ES module for browsers, React in production mode. */
async function bundle(source: string): Promise<string> {
  const result = await build({
    stdin: { contents: source, resolveDir: HERE, loader: "tsx", sourcefile: "web-apps-example.tsx" },
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2023",
    jsx: "automatic",
    define: { "process.env.NODE_ENV": '"production"' },
    write: false,
    logLevel: "silent",
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error("esbuild produced no bundle of the example");
  return output.text;
}

const app: PageApp = {
  html: '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Chat</title></head><body><div id="root"></div><script type="module" src="/app.js"></script></body></html>',
  script: "",
};
let pages: PageServer;
let browser: Chromium;
let profile: string;
let service: TestService;

beforeAll(async () => {
  pages = await startPageServer(app);
  // 127.0.0.1 on another port: another origin than the service's, and a secure context (crypto.randomUUID).
  const origin = `http://127.0.0.1:${pages.port}`;
  service = await startTestService({
    store: "postgres",
    env: { APTIX_CONFIG: await writeCatalog(CATALOG), APTIX_CORS_ORIGINS: origin },
  });
  app.script = await bundle(await docExample(service.url));
  profile = await mkdtemp(join(tmpdir(), "aptix-chromium-"));
  browser = await launchChromium({ userDataDir: profile });
});

afterAll(async () => {
  await browser?.close();
  await service?.close();
  await pages?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
});

describe("the docs' useChat page in Chromium", () => {
  it("streams a message, runs a browser tool and an approved server tool, and reloads the conversation", async () => {
    const chatId = uniqueId("browser-chat");
    const page = await browser.context.newPage();
    const failures: string[] = [];
    page.on("pageerror", (error) => failures.push(error.message));
    await page.goto(`http://127.0.0.1:${pages.port}/?chat=${chatId}`);
    const input = page.getByLabel("Message");
    const send = async (text: string) => {
      await input.fill(text);
      await page.getByRole("button", { name: "Send" }).click();
    };

    service.harness.enqueue(step.text(["Hello ", "from ", "Aptix."], { chunkDelayMs: 50 }));
    await send("Say hello.");
    await page.getByText("Hello from Aptix.").waitFor();

    // The model asks the browser for its time: onToolCall answers, and useChat sends it back on its own.
    service.harness.enqueue(
      step.functionCalls({ name: "get_local_time", arguments: {}, callId: "call_time" }),
    );
    service.harness.enqueue(step.text("Your browser told me the time."));
    await send("What time is it here?");
    await page.getByText("Your browser told me the time.").waitFor();
    const time = JSON.parse(lastToolOutputs(service.harness).call_time ?? "null") as {
      time?: unknown;
    } | null;
    expect(time?.time).toEqual(expect.any(String));

    // A server tool that asks first: the page shows the question, the user approves, the service runs it.
    const notes = {
      name: "notes.md",
      mimeType: "text/markdown",
      content: "# Notes",
      encoding: "utf8",
      description: null,
    };
    service.harness.enqueue(
      step.functionCalls({ name: "create_file", arguments: notes, callId: "call_create" }),
    );
    await send("Write my notes to a file.");
    await page.getByRole("button", { name: "Approve" }).waitFor();
    service.harness.enqueue(step.text("Created notes.md."));
    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByText("Created notes.md.").waitFor();
    await page.getByText("text/markdown file").waitFor();
    await page.screenshot({ path: join(tmpdir(), "aptix-web-chat.png"), fullPage: true });

    // A reload loads the conversation from the service: the same messages, from GET /v1/chat/:id/messages.
    await page.reload();
    await page.getByText("Hello from Aptix.").waitFor();
    await page.getByText("Created notes.md.").waitFor();
    expect(failures).toEqual([]);
    await page.close();
  });
});
