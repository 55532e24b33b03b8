import { describe, expect, it } from "vitest";
import { ServerToolRegistry } from "../../src/catalog/server-tool-registry.js";
import { InMemoryFileStore } from "../../src/in-memory/in-memory-file-store.js";
import {
  type LlmToolCall,
  type ServerTool,
  sha256ContentHashService,
  type ToolDefinition,
} from "../../src/index.js";
import { FileKeeper } from "../../src/server-tools/file-keeper.js";
import { ServerToolExecutionStep } from "../../src/server-tools/server-tool-execution-step.js";
import { ManualClock } from "../../src/testing/manual-clock.js";

const context = { principal: "alice", sessionId: "s1", turnId: "t1", mode: "general" };

function newStep(clock: ManualClock, tools: ServerTool[], toolTimeoutMs?: number) {
  let ids = 0;
  const store = new InMemoryFileStore(clock);
  const files = new FileKeeper({
    store,
    hashing: sha256ContentHashService,
    ids: { newId: (prefix) => `${prefix}_${++ids}` },
    clock,
    publicUrl: "https://agent.example/api/",
    ttlSeconds: 60,
  });
  const step = new ServerToolExecutionStep({
    registry: new ServerToolRegistry(tools),
    clock,
    files,
    ...(toolTimeoutMs === undefined ? {} : { toolTimeoutMs }),
  });
  return { step, store };
}

/** A tool that records its runs, takes `ms` of manual-clock time, and produces a file when asked. */
function recordingTool(
  name: string,
  clock: ManualClock,
  runs: string[],
): ServerTool<{ value: string; ms?: number }> {
  return {
    definition: { name, description: `${name} tool`, parameters: { type: "object" } },
    parseArguments(args) {
      const { value, ms } = args as { value?: unknown; ms?: unknown };
      if (typeof value !== "string") return { ok: false, message: "value must be a string" };
      return { ok: true, value: { value, ...(typeof ms === "number" ? { ms } : {}) } };
    },
    async execute(args, seen) {
      runs.push(`${name}:${args.value}:${seen.turnId}:${seen.mode}`);
      clock.advance(args.ms ?? 0);
      if (args.value === "explode") throw new Error("backend down");
      if (args.value === "throw-string") throw "plain failure";
      if (args.value === "unserializable") return { result: { big: 1n } };
      if (args.value === "refuse") return { errorMessage: "the backend says no" };
      if (args.value === "file") {
        const kept = await seen.files.keep({
          name: "out.txt",
          mimeType: "text/plain",
          content: new TextEncoder().encode("out"),
        });
        return { result: { fileId: kept.fileId } };
      }
      return { result: { echoed: args.value } };
    },
  };
}

/** Client tools the calls below may be offered: `path` a string, nothing else. */
const clientTool = (name: string): ToolDefinition => ({
  name,
  description: `${name} on the client`,
  parameters: {
    type: "object",
    properties: { path: { type: "string" } },
    required: ["path"],
    additionalProperties: false,
  },
});

/** alpha, beta and gamma are the server's; the calls' LLM call offered alpha, beta, read_file and write_file. */
function setup() {
  const clock = new ManualClock();
  const runs: string[] = [];
  const [alpha, beta, gamma] = ["alpha", "beta", "gamma"].map((name) => recordingTool(name, clock, runs));
  const { step } = newStep(clock, [alpha, beta, gamma] as ServerTool[]);
  const offered = [alpha, beta].map((tool) => tool?.definition as ToolDefinition);
  offered.push(clientTool("read_file"), clientTool("write_file"));
  const run = (...calls: LlmToolCall[]) => step.run({ calls, offered, context });
  return { clock, runs, run, step, offered };
}

const call = (callId: string, name: string, args: unknown): LlmToolCall => ({
  callId,
  name,
  argumentsJson: typeof args === "string" ? args : JSON.stringify(args),
});

describe("ServerToolExecutionStep (layer 3)", () => {
  it("runs server calls sequentially in call order and answers their outputs in that order, each with its start", async () => {
    const { clock, runs, run } = setup();
    const began = clock.now().getTime();
    const at = (ms: number) => new Date(began + ms);
    const result = await run(
      call("c1", "beta", { value: "one", ms: 7 }),
      call("c2", "alpha", { value: "two" }),
      call("c3", "beta", { value: "three", ms: 2 }),
    );
    if (!result.successful) throw new Error(result.errors[0].message);
    expect(runs).toEqual(["beta:one:t1:general", "alpha:two:t1:general", "beta:three:t1:general"]);
    expect(result.result.outputs).toEqual([
      { type: "function_call_output", callId: "c1", output: '{"echoed":"one"}', isError: false },
      { type: "function_call_output", callId: "c2", output: '{"echoed":"two"}', isError: false },
      { type: "function_call_output", callId: "c3", output: '{"echoed":"three"}', isError: false },
    ]);
    expect(result.result.executions).toEqual([
      {
        toolCallId: "c1",
        name: "beta",
        argumentsJson: '{"value":"one","ms":7}',
        resultJson: '{"echoed":"one"}',
        startedAt: at(0),
        executionMs: 7,
      },
      {
        toolCallId: "c2",
        name: "alpha",
        argumentsJson: '{"value":"two"}',
        resultJson: '{"echoed":"two"}',
        startedAt: at(7),
        executionMs: 0,
      },
      {
        toolCallId: "c3",
        name: "beta",
        argumentsJson: '{"value":"three","ms":2}',
        resultJson: '{"echoed":"three"}',
        startedAt: at(7),
        executionMs: 2,
      },
    ]);
    expect(result.result.clientCalls).toEqual([]);
    expect([...result.result.results.entries()]).toEqual([
      ["c1", { echoed: "one" }],
      ["c2", { echoed: "two" }],
      ["c3", { echoed: "three" }],
    ]);
  });

  it("leaves calls to tools it does not hold to the client, in call order", async () => {
    const { runs, run } = setup();
    const result = await run(
      call("c1", "read_file", { path: "a.ts" }),
      call("c2", "alpha", { value: "x" }),
      call("c3", "write_file", { path: "b.ts" }),
    );
    if (!result.successful) throw new Error(result.errors[0].message);
    expect(result.result.clientCalls).toEqual([
      { callId: "c1", name: "read_file", argumentsJson: '{"path":"a.ts"}' },
      { callId: "c3", name: "write_file", argumentsJson: '{"path":"b.ts"}' },
    ]);
    expect(result.result.outputs.map((output) => output.callId)).toEqual(["c2"]);
    expect(runs).toEqual(["alpha:x:t1:general"]);
  });

  it("answers arguments that are not a JSON object with an error output, for server and client tools alike", async () => {
    const { runs, run } = setup();
    const result = await run(
      call("c1", "alpha", "{not json"),
      call("c2", "alpha", "[1,2]"),
      call("c3", "read_file", '"a.ts"'),
      call("c4", "beta", "null"),
    );
    if (!result.successful) throw new Error(result.errors[0].message);
    expect(runs).toEqual([]);
    expect(result.result.clientCalls).toEqual([]);
    expect(result.result.outputs).toEqual([
      {
        type: "function_call_output",
        callId: "c1",
        output: "Invalid arguments for alpha: arguments must be a JSON object",
        isError: true,
      },
      {
        type: "function_call_output",
        callId: "c2",
        output: "Invalid arguments for alpha: arguments must be a JSON object",
        isError: true,
      },
      {
        type: "function_call_output",
        callId: "c3",
        output: "Invalid arguments for read_file: arguments must be a JSON object",
        isError: true,
      },
      {
        type: "function_call_output",
        callId: "c4",
        output: "Invalid arguments for beta: arguments must be a JSON object",
        isError: true,
      },
    ]);
    expect(result.result.executions[0]).toEqual({
      toolCallId: "c1",
      name: "alpha",
      argumentsJson: "{not json",
      errorMessage: "Invalid arguments for alpha: arguments must be a JSON object",
      startedAt: expect.any(Date),
      executionMs: 0,
    });
    // read_file is not the server's: refusing it ran nothing on the server.
    expect(result.result.executions.map((execution) => execution.toolCallId)).toEqual(["c1", "c2", "c4"]);
    expect(result.result.results.size).toBe(0);
  });

  it("answers arguments the tool refuses with its reason as an error output and goes on", async () => {
    const { runs, run } = setup();
    const result = await run(call("c1", "alpha", { value: 3 }), call("c2", "beta", { value: "ok" }));
    if (!result.successful) throw new Error(result.errors[0].message);
    expect(result.result.outputs).toEqual([
      {
        type: "function_call_output",
        callId: "c1",
        output: "Invalid arguments for alpha: value must be a string",
        isError: true,
      },
      { type: "function_call_output", callId: "c2", output: '{"echoed":"ok"}', isError: false },
    ]);
    expect(result.result.executions[0]?.errorMessage).toBe(
      "Invalid arguments for alpha: value must be a string",
    );
    expect(result.result.executions[0]?.resultJson).toBeUndefined();
    expect(runs).toEqual(["beta:ok:t1:general"]);
    expect(result.result.results.has("c1")).toBe(false);
  });

  it("fails with TOOL_FAILED naming the tool when an executor throws, and runs nothing after it", async () => {
    const { runs, run } = setup();
    const result = await run(
      call("c1", "alpha", { value: "first" }),
      call("c2", "beta", { value: "explode" }),
      call("c3", "alpha", { value: "never" }),
    );
    expect(result).toEqual({
      successful: false,
      errors: [
        {
          code: "TOOL_FAILED",
          message: "Server tool beta failed: backend down",
          details: { tool: "beta", toolCallId: "c2" },
        },
      ],
      warnings: [],
    });
    expect(runs).toEqual(["alpha:first:t1:general", "beta:explode:t1:general"]);
    const thrownString = await run(call("c9", "alpha", { value: "throw-string" }));
    expect(!thrownString.successful && thrownString.errors[0].message).toBe(
      "Server tool alpha failed: plain failure",
    );
  });

  it("lists the files tools keep as FileRefs with absolute urls and an expiry, and writes a null result as JSON null", async () => {
    const clock = new ManualClock();
    const silent: ServerTool<Record<string, unknown>> = {
      definition: { name: "silent", description: "returns nothing", parameters: { type: "object" } },
      parseArguments: (args) => ({ ok: true, value: args as Record<string, unknown> }),
      execute: async () => ({ result: undefined }),
    };
    const runs: string[] = [];
    const { step, store } = newStep(clock, [silent, recordingTool("alpha", clock, runs)] as ServerTool[]);
    const result = await step.run({
      calls: [call("c1", "silent", {}), call("c2", "alpha", { value: "file" })],
      offered: [silent.definition, recordingTool("alpha", clock, runs).definition],
      context,
    });
    if (!result.successful) throw new Error(result.errors[0].message);
    expect(result.result.outputs.map((output) => output.output)).toEqual(["null", '{"fileId":"file_1"}']);
    expect(result.result.files).toEqual([
      {
        name: "out.txt",
        mimeType: "text/plain",
        url: "https://agent.example/api/v1/files/file_1",
        sizeBytes: 3,
        contentHash: sha256ContentHashService.hash(new TextEncoder().encode("out")),
        contentExpires: new Date(clock.now().getTime() + 60_000).toISOString(),
      },
    ]);
    const stored = await store.get("alice", "file_1");
    expect(new TextDecoder().decode(stored?.content)).toBe("out");
  });

  it("keeps a file whose name holds U+0000 under a repaired name, and never shows what a failing file store threw", async () => {
    const clock = new ManualClock();
    class RefusingFileStore extends InMemoryFileStore {
      override async put(...args: Parameters<InMemoryFileStore["put"]>) {
        if (args[0].name.startsWith("refused")) {
          throw new Error('Failed query: insert into "files" … params: alice,secret-boot-prompt');
        }
        return super.put(...args);
      }
    }
    const store = new RefusingFileStore(clock);
    const files = new FileKeeper({
      store,
      hashing: sha256ContentHashService,
      ids: { newId: () => "file_1" },
      clock,
    });
    const keeper: ServerTool<{ name: string }> = {
      definition: { name: "keeper", description: "keeps a file", parameters: { type: "object" } },
      parseArguments: (args) => ({ ok: true, value: args as { name: string } }),
      execute: async ({ name }, seen) => {
        const kept = await seen.files.keep({ name, mimeType: "text/plain", content: new Uint8Array([1]) });
        return { result: { fileId: kept.fileId } };
      },
    };
    const step = new ServerToolExecutionStep({ registry: new ServerToolRegistry([keeper]), clock, files });
    const run = (name: string) =>
      step.run({ calls: [call("c1", "keeper", { name })], offered: [keeper.definition], context });

    const kept = await run("a\u0000.txt");
    if (!kept.successful) throw new Error(kept.errors[0].message);
    expect(kept.result.files?.[0]?.name).toBe("a\uFFFD.txt");
    expect((await store.get("alice", "file_1"))?.file.name).toBe("a\uFFFD.txt");

    const refused = await run("refused.txt");
    expect(!refused.successful && refused.errors[0]).toEqual({
      code: "TOOL_FAILED",
      message: "Server tool keeper failed: the file could not be stored",
      details: { tool: "keeper", toolCallId: "c1" },
    });
  });

  it("replaces U+0000 and lone surrogates in what a tool answers with U+FFFD, as in a model's answer", async () => {
    const { run } = setup();
    const result = await run(call("c1", "alpha", { value: "a\u0000b\uD83D c\u{1F4C4}" }));
    if (!result.successful) throw new Error(result.errors[0].message);
    const repaired = { echoed: "a\uFFFDb\uFFFD c\u{1F4C4}" };
    expect(result.result.results.get("c1")).toEqual(repaired);
    expect(result.result.executions[0]?.resultJson).toBe(JSON.stringify(repaired));
    expect(result.result.outputs[0]).toMatchObject({
      callId: "c1",
      output: JSON.stringify(repaired),
      isError: false,
    });
  });

  it("gives a tool's errorMessage to the model as an error output and lists it as errorMessage", async () => {
    const { runs, run } = setup();
    const result = await run(call("c1", "alpha", { value: "refuse" }), call("c2", "beta", { value: "next" }));
    if (!result.successful) throw new Error(result.errors[0].message);
    expect(result.result.outputs[0]).toEqual({
      type: "function_call_output",
      callId: "c1",
      output: "the backend says no",
      isError: true,
    });
    expect(result.result.executions[0]).toMatchObject({
      toolCallId: "c1",
      errorMessage: "the backend says no",
    });
    expect(result.result.executions[0]?.resultJson).toBeUndefined();
    expect(result.result.results.has("c1")).toBe(false);
    expect(runs).toEqual(["alpha:refuse:t1:general", "beta:next:t1:general"]);
  });

  it("fails with TOOL_FAILED when a tool outlives toolTimeoutMs, and aborts its signal", async () => {
    let seenSignal: AbortSignal | undefined;
    const hang: ServerTool<Record<string, unknown>> = {
      definition: { name: "hang", description: "never answers", parameters: { type: "object" } },
      parseArguments: (args) => ({ ok: true, value: args as Record<string, unknown> }),
      execute: (_args, seen) => {
        seenSignal = seen.signal;
        return new Promise(() => {});
      },
    };
    const { step } = newStep(new ManualClock(), [hang as ServerTool], 5);
    const result = await step.run({ calls: [call("c1", "hang", {})], offered: [hang.definition], context });
    expect(result).toMatchObject({
      successful: false,
      errors: [
        {
          code: "TOOL_FAILED",
          message: "Server tool hang failed: it ran longer than 5 ms",
          details: { tool: "hang", toolCallId: "c1", timeoutMs: 5 },
        },
      ],
    });
    expect(seenSignal?.aborted).toBe(true);
  });

  it("refuses a call to a tool its LLM call did not offer, server's or client's, back to the model", async () => {
    const { runs, run } = setup();
    const result = await run(
      call("c1", "files.read", { path: "a" }),
      call("c2", "gamma", { value: "x" }),
      call("c3", "apply_patch", { path: "a" }),
      call("c4", "read_file", { path: "a" }),
    );
    if (!result.successful) throw new Error("expected success");
    expect(runs).toEqual([]);
    expect(result.result.clientCalls.map((c) => c.callId)).toEqual(["c4"]);
    expect(result.result.outputs).toEqual(
      ["files.read", "gamma", "apply_patch"].map((name, index) => ({
        type: "function_call_output",
        callId: `c${index + 1}`,
        output: `Tool "${name}" is not available in mode "general".`,
        isError: true,
      })),
    );
    // None was the server's to run: none is a server tool result.
    expect(result.result.executions).toEqual([]);
  });

  it("refuses arguments that break the offered tool's schema, naming each path, before anything runs", async () => {
    const { runs, run } = setup();
    const result = await run(
      call("c1", "read_file", { path: 5, evil: true }),
      call("c2", "write_file", {}),
      call("c3", "read_file", { path: "ok" }),
    );
    if (!result.successful) throw new Error("expected success");
    expect(runs).toEqual([]);
    expect(result.result.clientCalls.map((c) => c.callId)).toEqual(["c3"]);
    expect(result.result.outputs).toEqual([
      {
        type: "function_call_output",
        callId: "c1",
        output: "Invalid arguments for read_file: path must be a string; evil is not allowed",
        isError: true,
      },
      {
        type: "function_call_output",
        callId: "c2",
        output: "Invalid arguments for write_file: path is required",
        isError: true,
      },
    ]);
    expect(result.result.executions).toEqual([]);
  });

  it("refuses a server tool's arguments that break its schema before its own check, listing the refusal", async () => {
    const clock = new ManualClock();
    const runs: string[] = [];
    const typed: ServerTool = {
      ...recordingTool("typed", clock, runs),
      definition: {
        name: "typed",
        description: "typed tool",
        parameters: {
          type: "object",
          properties: { value: { type: "string", enum: ["a", "b"] }, ms: { type: ["integer", "null"] } },
          required: ["value"],
        },
      },
    } as ServerTool;
    const { step } = newStep(clock, [typed]);
    const result = await step.run({
      calls: [call("c1", "typed", { value: "c", ms: 1.5 })],
      offered: [typed.definition],
      context,
    });
    if (!result.successful) throw new Error("expected success");
    const output =
      'Invalid arguments for typed: value must be one of "a", "b"; ms must be an integer or null';
    expect(result.result.outputs).toEqual([
      { type: "function_call_output", callId: "c1", output, isError: true },
    ]);
    expect(result.result.executions).toEqual([
      {
        toolCallId: "c1",
        name: "typed",
        argumentsJson: '{"value":"c","ms":1.5}',
        errorMessage: output,
        startedAt: clock.now(),
        executionMs: 0,
      },
    ]);
    expect(runs).toEqual([]);
  });

  it("refuses every call to a tool whose schema cannot be compiled, rather than letting it through unchecked", async () => {
    const { step } = newStep(new ManualClock(), []);
    const broken: ToolDefinition = {
      name: "broken",
      description: "a client tool with a bad schema",
      parameters: { type: "object", properties: { a: { $ref: "#/nowhere" } } },
    };
    const result = await step.run({ calls: [call("c1", "broken", { a: 1 })], offered: [broken], context });
    if (!result.successful) throw new Error("expected success");
    expect(result.result.clientCalls).toEqual([]);
    expect(result.result.outputs[0]?.output).toBe(
      "Invalid arguments for broken: cannot be checked: the tool's parameters are not a usable JSON Schema",
    );
  });

  it("tells beforehand whether calls hand the round to the client with no server tool run, as `run` then does", async () => {
    const { runs, run, step, offered } = setup();
    const cases: Array<[LlmToolCall[], boolean]> = [
      [[call("c1", "read_file", { path: "a" })], true],
      // Calls the model must retry go back to it, and the rest still to the client.
      [[call("c1", "files.read", { path: "a" }), call("c2", "read_file", { path: "a" })], true],
      [[call("c1", "read_file", "[1]"), call("c2", "write_file", { path: "b" })], true],
      // A server tool runs first; or nothing goes to the client (the round goes on with the model).
      [[call("c1", "read_file", { path: "a" }), call("c2", "alpha", { value: "x" })], false],
      [[call("c1", "files.read", { path: "a" }), call("c2", "read_file", "nope")], false],
      // A tool not offered, or arguments its schema refuses, run nothing and reach no client.
      [[call("c1", "gamma", { value: "x" }), call("c2", "read_file", { path: 5 })], false],
      [[call("c1", "gamma", { value: "x" }), call("c2", "read_file", { path: "a" })], true],
      [[], false],
    ];
    for (const [calls, hands] of cases) {
      expect(step.handsRoundToClient(calls, offered)).toBe(hands);
      const result = await run(...calls);
      if (!result.successful) throw new Error(result.errors[0].message);
      if (hands) expect(result.result.clientCalls.length).toBeGreaterThan(0);
    }
    // Only the case that says so ran a server tool.
    expect(runs).toEqual(["alpha:x:t1:general"]);
  });

  it("fails the turn when a tool's result cannot be written as JSON", async () => {
    const { run } = setup();
    const result = await run(call("c1", "alpha", { value: "unserializable" }));
    expect(!result.successful && result.errors[0]).toMatchObject({
      code: "TOOL_FAILED",
      details: { tool: "alpha", toolCallId: "c1" },
    });
  });
});
