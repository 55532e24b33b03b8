import type { ToolResult } from "@aptix/contracts";
import { step } from "@aptix/testing-llm-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AptixClient, type TurnStreamEvent } from "../src/index.js";
import { API_KEY, type LiveServer, startLiveServer, uniqueId } from "./support/live-server.js";
import { cutAfterEvents, recordingFetch, waitFor } from "./support/recording-fetch.js";

let server: LiveServer;

beforeAll(async () => {
  server = await startLiveServer();
});

afterAll(async () => {
  await server?.close();
});

const clientWith = (fetchImpl?: typeof fetch) =>
  new AptixClient({
    baseUrl: server.url,
    apiKey: API_KEY,
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
    retry: { baseDelayMs: 20 },
  });

async function collect(events: AsyncIterable<TurnStreamEvent>): Promise<TurnStreamEvent[]> {
  const seen: TurnStreamEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

const deltasOf = (events: TurnStreamEvent[]) =>
  events.flatMap((event) => (event.type === "output_text.delta" ? [event.delta] : []));

describe("execute", () => {
  it("answers a user turn with the final response", async () => {
    server.openai.script(step.text("Hello from the service."));
    const sessionId = uniqueId("exec");
    const answer = await clientWith().execute({ sessionId, turnId: "t1", instruction: "Say hello" });
    expect(answer).toMatchObject({
      successful: true,
      errors: [],
      result: { kind: "final", sessionId, turnId: "t1", primaryOutputText: "Hello from the service." },
    });
  });

  it("returns a non-retryable failure as it is, after one request", async () => {
    const { fetch, calls } = recordingFetch();
    const answer = await clientWith(fetch).execute({
      sessionId: uniqueId("invalid"),
      turnId: "t1",
      instruction: "Switch mode",
      mode: "agent",
    } as never);
    expect(answer.successful).toBe(false);
    expect(answer.errors[0]).toMatchObject({ code: "VALIDATION_FAILED" });
    expect(calls.map((call) => call.status)).toEqual([400]);
  });

  it("retries SESSION_BUSY after its Retry-After until the running turn has finished", async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    server.openai.script(async () => {
      await held;
      return step.text("First answer.");
    }, step.text("Second answer."));
    const sessionId = uniqueId("busy");
    const { fetch, calls } = recordingFetch();
    const client = clientWith(fetch);
    const first = client.execute({ sessionId, turnId: "t1", instruction: "One" });
    await waitFor(
      () => server.openai.requests.length > 0 && calls[0]?.status === undefined,
      "the first turn to run",
    );
    const started = Date.now();
    const second = client.execute({ sessionId, turnId: "t2", instruction: "Two" });
    await waitFor(() => calls[1]?.status === 409, "the second request to be refused");
    release();
    const [one, two] = await Promise.all([first, second]);

    expect(one).toMatchObject({ successful: true, result: { primaryOutputText: "First answer." } });
    expect(two).toMatchObject({ successful: true, result: { primaryOutputText: "Second answer." } });
    expect(calls.map((call) => call.status)).toEqual([200, 409, 200]);
    // Retry-After: 1 (second) was honoured, though the backoff alone would have been 10–20 ms.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    server.openai.reset();
  });
});

describe("stream", () => {
  it("yields the deltas, then the result whose text they add up to", async () => {
    server.openai.script(step.text(["Streaming ", "works ", "fine."]));
    const sessionId = uniqueId("stream");
    const events = await collect(clientWith().stream({ sessionId, turnId: "t1", instruction: "Stream" }));
    const last = events.at(-1);
    expect(deltasOf(events).join("")).toBe("Streaming works fine.");
    expect(last).toMatchObject({
      type: "result",
      id: "0-result",
      result: { successful: true, result: { primaryOutputText: "Streaming works fine." } },
    });
    expect(events.filter((event) => event.type === "result")).toHaveLength(1);
  });

  it("resumes a stream cut mid-turn from the last event id, losing and repeating no text", async () => {
    const words = ["One ", "two ", "three ", "four ", "five ", "six."];
    server.openai.script(step.text(words, { chunkDelayMs: 40 }));
    const sessionId = uniqueId("resume");
    let cut = false;
    const { fetch, calls } = recordingFetch((response, call) => {
      if (call.method !== "POST" || cut) return response;
      cut = true;
      return cutAfterEvents(response, 2);
    });
    const events = await collect(clientWith(fetch).stream({ sessionId, turnId: "t1", instruction: "Count" }));

    expect(deltasOf(events).join("")).toBe(words.join(""));
    const ids = events.map((event) => event.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(events.at(-1)).toMatchObject({
      type: "result",
      result: { result: { primaryOutputText: words.join("") } },
    });
    // The second event seen was the last id before the cut: the resume starts right after it.
    expect(calls.map(({ method, path, lastEventId }) => ({ method, path, lastEventId }))).toEqual([
      { method: "POST", path: "/v1/agent/execute", lastEventId: null },
      { method: "GET", path: `/v1/sessions/${sessionId}/turns/t1/events`, lastEventId: events[1]?.id },
    ]);
  });

  it("follows a user turn cut before its first event from the turn's first event", async () => {
    server.openai.script(step.text(["Nothing ", "was ", "lost."], { chunkDelayMs: 30 }));
    const sessionId = uniqueId("early");
    const { fetch, calls } = recordingFetch((response, call) =>
      call.method === "POST" ? cutAfterEvents(response, 0) : response,
    );
    const events = await collect(clientWith(fetch).stream({ sessionId, turnId: "t1", instruction: "Go" }));
    expect(deltasOf(events).join("")).toBe("Nothing was lost.");
    expect(calls.map(({ method, lastEventId }) => ({ method, lastEventId }))).toEqual([
      { method: "POST", lastEventId: null },
      { method: "GET", lastEventId: null },
    ]);
  });

  it("stops when its signal aborts, without resuming, and cancels the turn on the service", async () => {
    const sessionId = uniqueId("abort");
    server.openai.script(step.text(["Slow ", "text ", "that ", "never ", "ends."], { chunkDelayMs: 300 }));
    const { fetch, calls } = recordingFetch();
    const controller = new AbortController();
    const seen: TurnStreamEvent[] = [];
    const reading = (async () => {
      for await (const event of clientWith(fetch).stream(
        { sessionId, turnId: "t1", instruction: "Go slowly" },
        { signal: controller.signal },
      )) {
        seen.push(event);
        if (seen.length === 1) controller.abort();
      }
    })();
    await expect(reading).rejects.toMatchObject({ name: "AbortError" });
    expect(seen).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Not resumed: the one request after the stream's is the turn's cancel on the service.
    expect(calls.map((call) => `${call.method} ${call.path}`)).toEqual([
      "POST /v1/agent/execute",
      `POST /v1/sessions/${sessionId}/turns/t1/cancel`,
    ]);
    expect(calls[1]?.status).toBe(200);
  });
});

describe("runTurn", () => {
  it("runs the client tools in the calls' order, sends their results, and returns the final answer", async () => {
    server.openai.script(
      step.functionCalls([
        { name: "read_file", arguments: { path: "a.ts", startLine: null, endLine: null }, callId: "call_1" },
        { name: "apply_patch", arguments: { patch: "--- a/a.ts" }, callId: "call_2" },
        { name: "read_file", arguments: { path: "b.ts", startLine: null, endLine: null }, callId: "call_3" },
      ]),
      step.text(["Read ", "both; ", "the patch failed."]),
    );
    const { fetch, calls } = recordingFetch();
    const ran: string[] = [];
    const deltas: string[] = [];
    const responses: string[] = [];
    const sessionId = uniqueId("tools");
    const answer = await clientWith(fetch).runTurn({
      sessionId,
      instruction: "Fix a.ts",
      tools: {
        read_file: async (args, context) => {
          ran.push(`${context.toolCallId} read ${String(args.path)}`);
          await new Promise((resolve) => setTimeout(resolve, args.path === "a.ts" ? 30 : 0));
          return { contents: `contents of ${String(args.path)}` };
        },
        apply_patch: (_args, context) => {
          ran.push(`${context.toolCallId} patch`);
          throw new Error("The patch does not apply.");
        },
      },
      onTextDelta: (delta) => deltas.push(delta),
      onResponse: (response) => responses.push(response.kind),
    });

    expect(answer).toMatchObject({
      successful: true,
      result: { kind: "final", primaryOutputText: "Read both; the patch failed." },
    });
    expect(responses).toEqual(["client_tool_continuation", "final"]);
    expect(deltas.join("")).toBe("Read both; the patch failed.");
    expect(ran).toEqual(["call_1 read a.ts", "call_2 patch", "call_3 read b.ts"]);
    const [turn, continuation] = calls.map(
      (call) => call.body as { turnId: string; toolResults?: ToolResult[] },
    );
    expect(turn?.turnId).toMatch(/^[0-9a-f-]{36}$/);
    const results = continuation?.toolResults ?? [];
    expect(
      results.map(({ toolCallId, resultJson, errorMessage }) => ({ toolCallId, resultJson, errorMessage })),
    ).toEqual([
      {
        toolCallId: "call_1",
        resultJson: JSON.stringify({ contents: "contents of a.ts" }),
        errorMessage: undefined,
      },
      { toolCallId: "call_2", resultJson: undefined, errorMessage: "The patch does not apply." },
      {
        toolCallId: "call_3",
        resultJson: JSON.stringify({ contents: "contents of b.ts" }),
        errorMessage: undefined,
      },
    ]);
    expect(results[0]?.executionMs).toBeGreaterThanOrEqual(25);
    expect(continuation?.turnId).toBe(turn?.turnId);
  });

  it.each([
    ["approves", true, true],
    ["declines, with a message", { approved: false, message: "Not today." }, false],
    ["declines by default, with no approve given", undefined, false],
  ] as const)("asks approve for a server tool that asks first, and %s", async (_, answer, runs) => {
    const makeFile = {
      name: "notes.md",
      mimeType: "text/markdown",
      content: "# Notes",
      encoding: null,
      description: null,
    };
    server.openai.script(
      step.functionCalls({ name: "make_file", arguments: makeFile, callId: "call_file" }),
      step.text("Done."),
    );
    const asked: unknown[] = [];
    const { fetch, calls } = recordingFetch();
    const result = await clientWith(fetch).runTurn({
      sessionId: uniqueId("approve"),
      instruction: "Write notes",
      tools: {},
      ...(answer === undefined
        ? {}
        : {
            approve: (request) => {
              asked.push(request);
              return answer;
            },
          }),
    });
    expect(result).toMatchObject({ successful: true, result: { primaryOutputText: "Done." } });
    if (answer !== undefined) {
      expect(asked).toEqual([
        expect.objectContaining({ tool: "make_file", server: null, toolCallId: "call_file" }),
      ]);
      expect(JSON.parse((asked[0] as { argumentsJson: string }).argumentsJson)).toMatchObject({
        name: "notes.md",
      });
    }
    const [, continuation] = calls.map((call) => call.body as { toolResults?: ToolResult[] });
    const sent = JSON.parse(continuation?.toolResults?.[0]?.resultJson ?? "null") as { approved: boolean };
    expect(sent.approved).toBe(runs);
    // The file exists only when the call ran.
    expect(result.successful && result.result.files?.map((file) => file.name)).toEqual(
      runs ? ["notes.md"] : undefined,
    );
  });

  it("answers the warnings of every round: a user turn's come before its tool calls", async () => {
    server.openai.script(
      step.functionCalls({
        name: "read_file",
        arguments: { path: "a.ts", startLine: null, endLine: null },
        callId: "call_1",
      }),
      step.text("Read."),
    );
    const workspaceId = uniqueId("never-pushed");
    const answer = await clientWith().runTurn({
      sessionId: uniqueId("warned"),
      instruction: "Read a.ts",
      workspaceId,
      tools: { read_file: () => ({ contents: "" }) },
    });
    expect(answer).toMatchObject({ successful: true, result: { primaryOutputText: "Read." } });
    expect(answer.warnings).toEqual([
      { code: "WORKSPACE_NOT_FOUND", message: expect.stringContaining(`Workspace "${workspaceId}"`) },
    ]);
  });

  it("resumes a continuation's stream cut before its first event from the end of the round before", async () => {
    server.openai.script(
      step.functionCalls({
        name: "read_file",
        arguments: { path: "a.ts", startLine: null, endLine: null },
        callId: "call_1",
      }),
      step.text(["The ", "file ", "is ", "short."], { chunkDelayMs: 30 }),
    );
    const { fetch, calls } = recordingFetch((response, call) =>
      call.method === "POST" && (call.body as { toolResults?: unknown }).toolResults !== undefined
        ? cutAfterEvents(response, 0)
        : response,
    );
    const shown: string[] = [];
    const answer = await clientWith(fetch).runTurn({
      sessionId: uniqueId("cont"),
      turnId: "t1",
      instruction: "Read a.ts",
      tools: { read_file: () => "short" },
      onTextDelta: (_delta, text) => shown.push(text),
    });
    expect(answer).toMatchObject({ successful: true, result: { primaryOutputText: "The file is short." } });
    expect(shown.at(-1)).toBe("The file is short.");
    expect(calls.map(({ method, lastEventId }) => ({ method, lastEventId }))).toEqual([
      { method: "POST", lastEventId: null },
      { method: "POST", lastEventId: null },
      { method: "GET", lastEventId: "0-result" },
    ]);
  });

  it("answers a call of a tool it has no handler for with errorMessage", async () => {
    server.openai.script(
      step.functionCalls({ name: "apply_patch", arguments: { patch: "x" }, callId: "call_9" }),
      step.text("No patching here."),
    );
    const { fetch, calls } = recordingFetch();
    const answer = await clientWith(fetch).runTurn({
      sessionId: uniqueId("nohandler"),
      turnId: "t1",
      instruction: "Patch it",
      tools: {},
    });
    expect(answer).toMatchObject({ successful: true, result: { primaryOutputText: "No patching here." } });
    expect(calls[1]?.body).toMatchObject({
      turnId: "t1",
      toolResults: [{ toolCallId: "call_9", errorMessage: "This client has no tool named apply_patch." }],
    });
  });

  it("answers a result longer than the service accepts, or an error message, within maxToolResultChars", async () => {
    server.openai.script(
      step.functionCalls([
        {
          name: "read_file",
          arguments: { path: "big.txt", startLine: null, endLine: null },
          callId: "call_big",
        },
        { name: "search_files", arguments: { query: "x", glob: null }, callId: "call_fail" },
      ]),
      step.text("Too big to read whole."),
    );
    const { fetch, calls } = recordingFetch();
    const answer = await clientWith(fetch).runTurn({
      sessionId: uniqueId("toolong"),
      turnId: "t1",
      instruction: "Read big.txt",
      tools: {
        read_file: async () => ({ contents: "x".repeat(300_000) }),
        search_files: async () => {
          throw new Error("e".repeat(400_000));
        },
      },
    });
    expect(answer).toMatchObject({
      successful: true,
      result: { primaryOutputText: "Too big to read whole." },
    });
    expect(calls[1]?.body).toMatchObject({
      toolResults: [
        {
          toolCallId: "call_big",
          errorMessage:
            "The tool's result is longer than the 262144 characters the service accepts: ask for less, such as a range of lines.",
        },
        { toolCallId: "call_fail", errorMessage: `${"e".repeat(262_143)}…` },
      ],
    });
  });
});

describe("sessions, traces and files", () => {
  it("reads the session and the turn's trace", async () => {
    server.openai.script(step.text("Noted."));
    const sessionId = uniqueId("views");
    const client = clientWith();
    await client.execute({ sessionId, turnId: "t1", instruction: "Note this" });
    const session = await client.getSession(sessionId);
    expect(session).toMatchObject({
      successful: true,
      result: { sessionId, turns: [{ turnId: "t1", status: "completed" }] },
    });
    const trace = await client.getTurnTrace(sessionId, "t1");
    expect(trace).toMatchObject({ successful: true, result: { turnId: "t1", status: "completed" } });
    if (trace.successful) expect(trace.result.rounds).toHaveLength(1);
    expect((await client.getSession(uniqueId("unknown"))).errors[0]).toMatchObject({
      code: "SESSION_NOT_FOUND",
    });
  });

  it("lists the modes a mode picker shows, with the one a new session starts in", async () => {
    expect(await clientWith().modes()).toEqual({
      successful: true,
      result: { modes: [{ id: "general", displayName: "General" }], defaultModeId: "general" },
      errors: [],
      warnings: [],
    });
  });

  it("lists sessions, reads one back as messages, cancels a turn that ended as it is, and deletes the session", async () => {
    server.openai.script(step.text("Listed."));
    const sessionId = uniqueId("listed");
    const client = clientWith();
    await client.execute({ sessionId, turnId: "t1", instruction: "List me" });
    const listed = await client.sessions.list({ limit: 100 });
    expect(
      listed.successful && listed.result.sessions.find((session) => session.sessionId === sessionId),
    ).toMatchObject({ sessionId, turnCount: 1, lastTurnStatus: "completed", title: "List me" });
    const searched = await client.sessions.list({ q: "LIST M" });
    expect(searched.successful && searched.result.sessions.map((session) => session.sessionId)).toContain(
      sessionId,
    );
    const missed = await client.sessions.list({ q: `not ${sessionId}` });
    expect(missed).toMatchObject({ successful: true, result: { sessions: [] } });
    const messages = await client.sessions.messages(sessionId, { limit: 1 });
    expect(messages).toMatchObject({
      successful: true,
      result: { messages: [{ turnId: "t1", role: "user", text: "List me" }], nextCursor: "1" },
    });
    const rest = await client.sessions.messages(sessionId, { cursor: "1" });
    expect(rest).toMatchObject({ result: { messages: [{ role: "assistant", text: "Listed." }] } });
    expect(await client.cancel({ sessionId, turnId: "t1" })).toMatchObject({
      successful: true,
      result: { turnId: "t1", status: "completed" },
    });
    expect(await client.sessions.delete(sessionId)).toMatchObject({
      successful: true,
      result: { deleted: true },
    });
    expect((await client.sessions.delete(sessionId)).errors[0]).toMatchObject({ code: "SESSION_NOT_FOUND" });
    expect((await client.sessions.list({ limit: 0 })).errors[0]).toMatchObject({
      code: "VALIDATION_FAILED",
      details: { fields: [{ path: "limit" }] },
    });
  });

  it("reads the caller's usage by a page of sessions, the next page after the report's cursor", async () => {
    const client = clientWith();
    const sessions = [uniqueId("spent"), uniqueId("spent")].sort();
    for (const sessionId of sessions) {
      server.openai.script(step.text("Spent."));
      await client.execute({ sessionId, turnId: "t1", instruction: "Spend" });
    }
    // Earlier tests' sessions share the principal: page until ours are read.
    const keys: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.usage({ groupBy: "session", limit: 1, ...(cursor ? { cursor } : {}) });
      if (!page.successful) throw new Error(page.errors[0].message);
      expect(page.result.buckets.length).toBeLessThanOrEqual(1);
      keys.push(...page.result.buckets.map((bucket) => bucket.key));
      cursor = page.result.nextCursor;
    } while (cursor !== undefined);
    expect(keys.filter((key) => sessions.includes(key))).toEqual(sessions);
    expect((await client.usage({ groupBy: "session", limit: 0 })).errors[0]).toMatchObject({
      code: "VALIDATION_FAILED",
      details: { fields: [{ path: "limit" }] },
    });
  });

  it("fetches a file's bytes and content type", async () => {
    const text = "--- a/a.ts\n+++ b/a.ts\n";
    await server.putFile({ fileId: "file_client_1", name: "fix.patch", mimeType: "text/x-diff", text });
    const client = clientWith();
    const file = await client.files.get("file_client_1");
    expect(
      file.successful && { text: new TextDecoder().decode(file.result.bytes), type: file.result.contentType },
    ).toEqual({
      text: "--- a/a.ts\n+++ b/a.ts\n",
      type: "text/x-diff",
    });
    expect((await client.files.get("file_missing")).errors[0]).toMatchObject({ code: "FILE_NOT_FOUND" });
  });

  it("fetches a FileRef's content from its own baseUrl, whatever host the FileRef's url names", async () => {
    const text = "hello\n";
    const sizeBytes = await server.putFile({
      fileId: "file_client_2",
      name: "hello.txt",
      mimeType: "text/plain",
      text,
    });
    const ref = {
      name: "hello.txt",
      mimeType: "text/plain",
      sizeBytes,
      contentHash: `sha256:${"0".repeat(64)}`,
    };
    const client = clientWith();
    for (const url of ["https://aptix.example.com/v1/files/file_client_2", "/v1/files/file_client_2"]) {
      const file = await client.files.get({ ...ref, url });
      expect(file.successful && new TextDecoder().decode(file.result.bytes)).toBe(text);
    }
    await expect(client.files.get({ ...ref, url: "https://aptix.example.com/elsewhere" })).rejects.toThrow(
      'The url of file "hello.txt" names no file: https://aptix.example.com/elsewhere',
    );
  });
});

describe("background turns", () => {
  it("starts a turn in the background with runTurn and reads it back with getTurn, once it has ended", async () => {
    server.openai.script(step.text("Done while nobody waited."));
    const sessionId = uniqueId("background");
    const client = clientWith();
    const accepted = await client.runTurn({
      sessionId,
      turnId: "t1",
      instruction: "Work alone",
      background: true,
      tools: {},
    });
    expect(accepted).toMatchObject({ successful: true, result: { sessionId, turnId: "t1" } });
    let turn = await client.getTurn({ sessionId, turnId: "t1" });
    for (let reads = 0; turn.successful && turn.result.status !== "completed" && reads < 200; reads++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      turn = await client.getTurn({ sessionId, turnId: "t1" });
    }
    expect(turn).toMatchObject({
      successful: true,
      result: {
        turnId: "t1",
        status: "completed",
        result: { primaryOutputText: "Done while nobody waited." },
      },
    });
    expect(await client.getTurn({ sessionId, turnId: "t9" })).toMatchObject({
      successful: false,
      errors: [{ code: "TURN_NOT_FOUND" }],
    });
  });
});
