import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as contracts from "../src/index.js";
import {
  AgentExecuteResultSchema,
  contractJsonSchemas,
  DEFAULT_REQUEST_LIMITS,
  ERROR_HTTP_STATUS,
  isToolContinuationRequest,
  type ToolCall,
  type ToolResult,
  type UserTurnRequest,
  validateAgentExecuteRequest,
  validateAgentExecuteResponse,
  WARNING_CODES,
} from "../src/index.js";
import { describeFailure } from "./readme/describe-failure.js";
import { isAgentExecuteRequest } from "./readme/json-schema.js";
import { postExecute } from "./readme/post-execute.js";
import { runTurn } from "./readme/run-turn.js";
import { validateForServer } from "./readme/server-limits.js";

/**
 * The README is checked against the code: its TypeScript blocks are copies of the files under test/readme/
 * (typechecked, linted and run here), its JSON blocks are validated, and its tables are compared with the exports.
 */
const packageDir = new URL("../", import.meta.url);
const README = readFileSync(new URL("README.md", packageDir), "utf8");

interface CodeBlock {
  /** The `<!-- … -->` comment on the line right before the fence, if any. */
  marker: string | undefined;
  language: string;
  body: string;
  line: number;
}

function codeBlocks(markdown: string): CodeBlock[] {
  const lines = markdown.split("\n");
  const blocks: CodeBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    const open = /^```(\w*)$/.exec(lines[index] ?? "");
    if (!open) continue;
    const end = lines.indexOf("```", index + 1);
    expect(end, `unclosed code block at README.md:${index + 1}`).toBeGreaterThan(index);
    blocks.push({
      marker: /^<!-- (.+) -->$/.exec(lines[index - 1] ?? "")?.[1],
      language: open[1] ?? "",
      body: lines.slice(index + 1, end).join("\n"),
      line: index + 1,
    });
    index = end;
  }
  return blocks;
}

const blocks = codeBlocks(README);

const markedBlocks = (kind: string) =>
  blocks.flatMap((block) => {
    const match = new RegExp(`^${kind}: (.+)$`).exec(block.marker ?? "");
    return match?.[1] === undefined ? [] : [{ ...block, name: match[1] }];
  });

const examples = new Map(
  markedBlocks("example").map((block) => [block.name, JSON.parse(block.body) as unknown]),
);

function example<T = Record<string, unknown>>(name: string): T {
  expect(examples.has(name), `README has no <!-- example: ${name} --> block`).toBe(true);
  return examples.get(name) as T;
}

/** The rows of the Markdown table whose header row starts with `| firstHeader |`. */
function tableRows(firstHeader: string): string[][] {
  const lines = README.split("\n");
  const start = lines.findIndex((line) => line.startsWith(`| ${firstHeader} |`));
  expect(start, `README has no table headed "${firstHeader}"`).toBeGreaterThanOrEqual(0);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(
      line
        .slice(1, -1)
        .split("|")
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

/** Every `name` in backticks in a cell. */
const codeNames = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? "");

describe("README code blocks", () => {
  it("every block is checked: TypeScript is a snippet file, JSON an example, text an output", () => {
    for (const block of blocks) {
      const where = `README.md:${block.line} (${block.language})`;
      if (block.language === "ts") expect(block.marker, where).toMatch(/^snippet: /);
      else if (block.language === "json") expect(block.marker, where).toMatch(/^example: /);
      else if (block.language === "text") expect(block.marker, where).toMatch(/^output: /);
      else expect(block.language, where).toBe("sh");
    }
    expect(markedBlocks("snippet").length).toBeGreaterThanOrEqual(4);
    expect(examples.size).toBeGreaterThanOrEqual(8);
  });

  it.each(markedBlocks("snippet").map((block) => [block.name, block] as const))(
    "%s is copied verbatim",
    (file, block) => {
      const source = readFileSync(new URL(file, packageDir), "utf8");
      expect(
        `${block.body}\n`,
        `README.md:${block.line} differs from ${file}: copy the file into the README`,
      ).toBe(source);
    },
  );
});

describe("README envelope examples", () => {
  it("success and failure are valid InvokeResults", () => {
    const validate = new Ajv2020({ allErrors: true, formats: { "date-time": true } }).compile(
      contractJsonSchemas()["invoke-result.schema.json"] ?? {},
    );
    for (const name of [
      "envelope-success",
      "envelope-failure",
      "invalid-answer",
      "turn-answer",
      "continuation-answer",
    ]) {
      expect(AgentExecuteResultSchema.safeParse(example(name)).success, name).toBe(true);
      expect(validate(example(name)), name).toBe(true);
    }
    expect(example("envelope-failure")).not.toHaveProperty("result");
    expect(example("envelope-success").errors).toEqual([]);
  });
});

describe("README: read an error", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("the invalid request gets exactly the documented failure", () => {
    expect(validateAgentExecuteRequest(example("invalid-request"))).toEqual(example("invalid-answer"));
  });

  it("postExecute answers it locally, without calling the server", async () => {
    const fetch = vi.fn();
    vi.stubGlobal("fetch", fetch);
    const answer = await postExecute("http://127.0.0.1:8787", example("invalid-request") as never);
    expect(answer).toEqual(example("invalid-answer"));
    expect(fetch).not.toHaveBeenCalled();
  });

  it.each(markedBlocks("output"))("describeFailure prints the documented lines ($name)", (block) => {
    const [fn, input] = block.name.split(" ");
    expect(fn).toBe("describe-failure");
    expect(describeFailure(example(input ?? ""))).toEqual(block.body.split("\n"));
  });

  it("describeFailure prints code and message for other errors", () => {
    expect(describeFailure(example("envelope-failure"))).toEqual([
      "SESSION_BUSY: Another turn of session sess_01HZX3 is running.",
    ]);
  });

  it("the error-code table matches ERROR_HTTP_STATUS", () => {
    const table = Object.fromEntries(
      tableRows("code").map(([code, status]) => [codeNames(code ?? "")[0], Number(status)]),
    );
    expect(table).toEqual(ERROR_HTTP_STATUS);
  });

  it("the warning table lists WARNING_CODES", () => {
    expect(tableRows("warning").map(([code]) => codeNames(code ?? "")[0])).toEqual([...WARNING_CODES]);
  });
});

describe("README worked example", () => {
  const turn = () => example<UserTurnRequest>("turn-request");
  const turnAnswer = () => example("turn-answer");
  const continuation = () => example("continuation-request");
  const finalAnswer = () => example("continuation-answer");

  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("each body is valid, for zod and for the published JSON Schema", () => {
    for (const name of ["turn-request", "continuation-request"]) {
      expect(validateAgentExecuteRequest(example(name))).toEqual(contracts.ok(example(name)));
      expect(isAgentExecuteRequest(example(name)), name).toBe(true);
    }
    for (const name of ["turn-answer", "continuation-answer"]) {
      const { result } = example<{ result: unknown }>(name);
      expect(validateAgentExecuteResponse(result)).toEqual(contracts.ok(result));
    }
    expect(isAgentExecuteRequest(example("invalid-request"))).toBe(false);
  });

  it("is one turn: a user turn, a continuation answer, the matching tool results, a final answer", () => {
    const request = validateAgentExecuteRequest(turn());
    const followUp = validateAgentExecuteRequest(continuation());
    if (!request.successful || !followUp.successful) throw new Error("invalid example request");
    expect(isToolContinuationRequest(request.result)).toBe(false);
    expect(isToolContinuationRequest(followUp.result)).toBe(true);

    const first = validateAgentExecuteResponse(turnAnswer().result);
    const last = validateAgentExecuteResponse(finalAnswer().result);
    if (!first.successful || !last.successful) throw new Error("invalid example response");
    expect(first.result.kind).toBe("client_tool_continuation");
    expect(last.result.kind).toBe("final");

    // Every follow-on names the same session and turn (AGN-033 §3.1).
    for (const body of [first.result, followUp.result, last.result]) {
      expect({ sessionId: body.sessionId, turnId: body.turnId }).toEqual({
        sessionId: request.result.sessionId,
        turnId: request.result.turnId,
      });
    }
    // The results match the calls exactly: count, ids and order (AGN-033 §3.3).
    if (first.result.kind !== "client_tool_continuation" || !isToolContinuationRequest(followUp.result))
      return;
    expect(followUp.result.toolResults.map((result) => result.toolCallId)).toEqual(
      first.result.toolCalls.map((call) => call.toolCallId),
    );
  });

  it("runTurn sends exactly the documented requests and returns the final response", async () => {
    const answers = [turnAnswer(), finalAnswer()];
    const sent: { url: string; method: string; contentType: string; body: unknown }[] = [];
    vi.stubGlobal("fetch", async (url: URL | string, init: RequestInit) => {
      sent.push({
        url: String(url),
        method: init.method ?? "GET",
        contentType: new Headers(init.headers).get("content-type") ?? "",
        body: JSON.parse(String(init.body)),
      });
      return new Response(JSON.stringify(answers.shift()), {
        headers: { "content-type": "application/json" },
      });
    });
    const results = new Map(
      (continuation().toolResults as ToolResult[]).map((result) => [result.toolCallId, result] as const),
    );
    const ran: string[] = [];
    const runTool = async (call: ToolCall): Promise<ToolResult> => {
      ran.push(`${call.name} ${call.argumentsJson}`);
      const result = results.get(call.toolCallId);
      if (result === undefined) throw new Error(`no result for ${call.toolCallId}`);
      return result;
    };

    const final = await runTurn("http://127.0.0.1:8787", turn(), runTool);

    expect(final).toEqual(finalAnswer().result);
    expect(sent).toEqual([
      {
        url: "http://127.0.0.1:8787/v1/agent/execute",
        method: "POST",
        contentType: "application/json",
        body: turn(),
      },
      {
        url: "http://127.0.0.1:8787/v1/agent/execute",
        method: "POST",
        contentType: "application/json",
        body: continuation(),
      },
    ]);
    expect(ran).toEqual([
      'run_command {"command":"npm test"}',
      'read_file {"relativePath":"src/sum.ts"}',
      'read_file {"relativePath":"src/sum.spec.ts"}',
    ]);
  });

  it("runTurn throws the failure's lines when the server refuses a request", async () => {
    vi.stubGlobal(
      "fetch",
      async () => new Response(JSON.stringify(example("envelope-failure")), { status: 409 }),
    );
    await expect(runTurn("http://127.0.0.1:8787", turn(), async () => ({}) as ToolResult)).rejects.toThrow(
      "SESSION_BUSY: Another turn of session sess_01HZX3 is running.",
    );
  });

  it("postExecute refuses a body that is not an InvokeResult", async () => {
    vi.stubGlobal("fetch", async () => new Response('{"error":"bad gateway"}', { status: 502 }));
    await expect(postExecute("http://127.0.0.1:8787", turn())).rejects.toThrow(
      "HTTP 502: the body is not an InvokeResult",
    );
  });
});

describe("README size limits", () => {
  it("the table lists every default limit with its value", () => {
    const table = Object.fromEntries(
      tableRows("limit").map(([name, value]) => [
        codeNames(name ?? "")[0],
        Number(/^[\d,]+/.exec(value ?? "")?.[0].replaceAll(",", "")),
      ]),
    );
    expect(table).toEqual(DEFAULT_REQUEST_LIMITS);
  });

  it("the server-limits snippet applies the published limit", () => {
    const withContents = (contents: string) => ({
      sessionId: "s1",
      turnId: "t1",
      inputArtifacts: [{ relativePath: "big.txt", fileName: "big.txt", contents, origin: "ide" }],
    });
    expect(validateForServer(withContents("x".repeat(512 * 1024))).successful).toBe(true);
    expect(validateForServer(withContents("x".repeat(512 * 1024 + 1))).successful).toBe(false);
  });
});

describe("README JSON Schema and exports", () => {
  const require = createRequire(import.meta.url);

  it("each documented import path resolves to a published schema file", () => {
    const paths = tableRows("import path").map(([path]) => codeNames(path ?? "")[0] ?? "");
    expect(paths.map((path) => path.replace("@aptix/contracts/schema/", "")).sort()).toEqual(
      Object.keys(contractJsonSchemas()).sort(),
    );
    for (const path of paths) expect(() => require.resolve(path)).not.toThrow();
  });

  it("the exports table lists every runtime export, and only those", () => {
    const listed = tableRows("export").flatMap(([names]) => codeNames(names ?? ""));
    expect(listed.sort()).toEqual(Object.keys(contracts).sort());
  });

  it("the types paragraph lists every exported type, and only those", () => {
    const index = readFileSync(new URL("src/index.ts", packageDir), "utf8");
    const exportedTypes = [
      ...[...index.matchAll(/\btype (\w+)/g)].map((match) => match[1]),
      ...[...index.matchAll(/export type \{([^}]+)\}/g)].flatMap((match) =>
        (match[1] ?? "").split(",").map((name) => name.trim()),
      ),
    ].filter((name) => name !== undefined && name !== "" && name !== "type");
    const paragraph = /^Types: ([\s\S]+?)\.$/m.exec(README)?.[1] ?? "";
    expect(codeNames(paragraph).sort()).toEqual([...new Set(exportedTypes)].sort());
  });
});
