/**
 * Files the model makes, over real HTTP on Postgres (docs/security.md): `create_file` takes ASCII media types only,
 * and a download is always an attachment the browser may not sniff, even for a file kept before the check.
 */
import { type ScriptedOpenAI, startScriptedOpenAI, step } from "@aptix/testing-llm-servers";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  API_KEYS,
  CREATE_FILE_CATALOG,
  checkAndResetHarness,
  expectFinal,
  postgresDriver,
  startTestService,
  type TestService,
  uniqueId,
  userTurn,
  writeCatalog,
} from "../../src/e2e/index.js";

const createFile = (callId: string, name: string, mimeType: string) => ({
  name: "create_file",
  callId,
  arguments: { name, mimeType, content: "<script>alert(1)</script>\n", encoding: null, description: null },
});

let harness: ScriptedOpenAI;
let service: TestService;

beforeAll(async () => {
  harness = await startScriptedOpenAI();
  service = await startTestService({
    store: "postgres",
    harness,
    env: { APTIX_CONFIG: await writeCatalog(CREATE_FILE_CATALOG) },
  });
});

afterAll(async () => {
  await service?.close();
  await harness?.close();
});

afterEach(() => {
  checkAndResetHarness(harness);
});

/** Runs SQL on the service's `files` table (`FILES` in `query`), with the store's own Postgres driver. */
async function onFiles<T>(query: string): Promise<T> {
  const sql = postgresDriver()(service.database.url, { max: 1, onnotice: () => {}, fetch_types: false });
  try {
    return (await sql.unsafe(query.replace("FILES", `"${service.database.schema}".files`))) as T;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

const storedFiles = () =>
  onFiles<Array<{ file_id: string; mime_type: string }>>(
    "select file_id, mime_type from FILES order by created_at",
  );

const download = (url: string) => fetch(url, { headers: { authorization: `Bearer ${API_KEYS.alice}` } });

describe("files the model makes", () => {
  it("refuses a media type that is not ASCII type/subtype with parameters back to the model, storing nothing, and the turn goes on", async () => {
    const before = await storedFiles();
    harness.script(
      step.functionCalls([
        createFile("call_crlf", "a.html", "text/html\r\nX-Injected: yes"),
        createFile("call_unicode", "b.txt", "text/plain; x=日本"),
        createFile("call_bare", "c.txt", "text"),
      ]),
      step.text("I could not make them."),
    );
    const final = expectFinal(await service.post(userTurn(uniqueId("media"), "t1", "Make files")));
    expect(final.primaryOutputText).toBe("I could not make them.");
    expect(final.files).toBeUndefined();
    expect(final.toolResults?.map((result) => [result.toolCallId, result.errorMessage])).toEqual(
      ["call_crlf", "call_unicode", "call_bare"].map((callId) => [
        callId,
        expect.stringMatching(/^Invalid arguments for create_file: mimeType must be an ASCII media type/),
      ]),
    );
    // The model heard of each refusal as the call's error output.
    const second = harness.responseRequests()[1]?.body as
      | { input: Array<Record<string, unknown>> }
      | undefined;
    const outputs = (second?.input ?? [])
      .filter((item) => item.type === "function_call_output")
      .map((item) => [item.call_id, JSON.parse(String(item.output)) as unknown]);
    expect(outputs).toEqual(
      ["call_crlf", "call_unicode", "call_bare"].map((callId) => [
        callId,
        { error: expect.stringContaining("mimeType must be an ASCII media type") },
      ]),
    );
    expect(await storedFiles()).toEqual(before);
  });

  it("serves a download as an attachment with nosniff, its type as given and a safe file name", async () => {
    harness.script(
      step.functionCalls([
        createFile("call_page", "page.html", "text/html; charset=utf-8"),
        createFile("call_named", '日本 "report".txt', 'text/plain; charset="utf-8"'),
      ]),
      step.text("Made them."),
    );
    const final = expectFinal(await service.post(userTurn(uniqueId("media"), "t1", "Make files")));
    const [page, named] = final.files ?? [];
    if (!page || !named) throw new Error(`expected two files, got ${JSON.stringify(final.files)}`);

    const html = await download(page.url);
    expect(html.status).toBe(200);
    expect(html.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(html.headers.get("x-content-type-options")).toBe("nosniff");
    expect(html.headers.get("content-disposition")).toBe("attachment; filename=page.html");

    const text = await download(named.url);
    expect(text.headers.get("content-type")).toBe('text/plain; charset="utf-8"');
    expect(text.headers.get("x-content-type-options")).toBe("nosniff");
    // RFC 6266: an ASCII `filename` for old clients, the real name in `filename*`.
    expect(text.headers.get("content-disposition")).toBe(
      `attachment; filename="?? \\"report\\".txt"; filename*=UTF-8''%E6%97%A5%E6%9C%AC%20%22report%22.txt`,
    );
  });

  it("serves a file kept with a bad media type before the check as application/octet-stream, not 500", async () => {
    harness.script(
      step.functionCalls(createFile("call_old", "old.html", "text/html")),
      step.text("Made it."),
    );
    const final = expectFinal(await service.post(userTurn(uniqueId("media"), "t1", "Make a file")));
    const url = final.files?.[0]?.url ?? "";
    const fileId = new URL(url).pathname.split("/").at(-1);
    // As an older version kept it, when create_file took any media type.
    await onFiles(
      `update FILES set mime_type = E'text/html\\r\\nX-Injected: yes' where file_id = '${fileId}'`,
    );
    const answer = await download(url);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("application/octet-stream");
    expect(answer.headers.get("x-injected")).toBeNull();
    expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await answer.text()).toBe("<script>alert(1)</script>\n");
  });
});
