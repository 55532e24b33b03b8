import { createHash } from "node:crypto";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  extractSchemas,
  preloadOpenAISchemas,
  readOpenAISchemas,
  referencedComponents,
  type ScriptedOpenAI,
  startScriptedOpenAI,
  step,
  VALIDATED_SCHEMAS,
  validateCreateResponse,
  validateOpenAISchema,
} from "../src/index.js";

let server: ScriptedOpenAI;

beforeAll(async () => {
  server = await startScriptedOpenAI();
});

afterAll(async () => {
  await server.close();
});

/** docs/wire-mapping.md: the first LLM call of a session, on the real wire. */
const composed = {
  model: "gpt-5.1",
  input: [
    { role: "system", content: [{ type: "input_text", text: "You are the Aptix agent." }] },
    {
      role: "user",
      content: [
        { type: "input_text", text: "[MODE: general]\n\n[INSTRUCTION]\nExplain this screenshot." },
        {
          type: "input_text",
          text: "[CONTEXT]\n\n=== CHUNK 1 ===\nId: ctx_1\nPath: src/Program.cs\nLines: 40-85\nLanguage: csharp\n```csharp\nclass P {}\n```",
        },
        { type: "input_image", detail: "auto", image_url: "data:image/png;base64,iVBORw0KGgo=" },
        { type: "input_file", filename: "notes.txt", file_data: "data:text/plain;base64,aGVsbG8=" },
      ],
    },
  ],
  tools: [
    {
      type: "function",
      name: "agent_change_mode",
      description: "Switch the session to another mode.",
      parameters: {
        type: "object",
        properties: { mode: { type: "string" }, reason: { type: "string" } },
        required: ["mode", "reason"],
        additionalProperties: false,
      },
      strict: true,
    },
  ],
  tool_choice: { type: "function", name: "agent_change_mode" },
  store: true,
};

async function post(body: unknown): Promise<{ status: number; json: { error?: Record<string, unknown> } }> {
  const res = await fetch(`${server.baseUrl}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer test" },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as { error?: Record<string, unknown> } };
}

describe("CreateResponse validation against the official OpenAPI document", () => {
  it("reads the committed extract of the official document, closed under $ref, and compiles it once", () => {
    const extract = readOpenAISchemas();
    expect(extract.source).toMatchObject({ title: "OpenAI API", openapi: expect.stringMatching(/^3\.1\./) });
    expect(extract.source.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(extract.source.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(extract.roots).toEqual([...VALIDATED_SCHEMAS]);
    const names = new Set(Object.keys(extract.schemas));
    for (const root of VALIDATED_SCHEMAS) expect(names.has(root), root).toBe(true);
    const dangling = [...referencedComponents(extract.schemas)].filter((name) => !names.has(name));
    expect(dangling).toEqual([]);

    const first = preloadOpenAISchemas();
    const again = preloadOpenAISchemas();
    expect(again.compileMs).toBe(first.compileMs);
  });

  it("extracts the roots and what they reference, nothing else, recording the document's version and hash", () => {
    const text = "openapi: 3.1.0 (the document's text, hashed as given)";
    const document = {
      openapi: "3.1.0",
      info: { title: "OpenAI API", version: "9.9.9" },
      components: {
        schemas: {
          Root: { type: "object", properties: { a: { $ref: "#/components/schemas/A" } } },
          A: { anyOf: [{ $ref: "#/components/schemas/B" }, { $ref: "#/components/schemas/A" }] },
          B: { type: "string" },
          Unused: { type: "number" },
        },
      },
    };
    const extract = extractSchemas(document, text, ["Root"]);
    expect(Object.keys(extract.schemas)).toEqual(["A", "B", "Root"]);
    expect(extract.schemas.A).toBe(document.components.schemas.A);
    expect(extract.source).toEqual({
      title: "OpenAI API",
      openapi: "3.1.0",
      version: "9.9.9",
      sha256: createHash("sha256").update(text).digest("hex"),
    });
    expect(() => extractSchemas(document, text, ["Missing"])).toThrow("components.schemas.Missing not found");
  });

  it("accepts the composed request of docs/wire-mapping.md (system + user input_text, input_image, tools, forced tool)", async () => {
    expect(validateCreateResponse(composed)).toMatchObject({ valid: true, violations: [] });

    server.script(
      step.functionCalls({ name: "agent_change_mode", arguments: { mode: "general", reason: "asked" } }),
    );
    const { status } = await post(composed);
    expect(status).toBe(200);
    expect(server.requests.at(-1)?.schemaErrors).toBeUndefined();
  });

  it("accepts a continuation: previous_response_id plus function_call_output items", () => {
    const result = validateCreateResponse({
      model: "gpt-5.1",
      previous_response_id: "resp_1",
      input: [{ type: "function_call_output", call_id: "call_1", output: '{"ok":true}' }],
      tools: composed.tools,
      store: true,
    });
    expect(result.violations).toEqual([]);
  });

  it("answers 400 to the DDR's conceptual `text` part, and records the schema errors", async () => {
    const { status, json } = await post({
      model: "gpt-5.1",
      input: [{ role: "user", content: [{ type: "text", text: "x" }] }],
    });
    expect(status).toBe(400);
    expect(json.error).toMatchObject({
      type: "invalid_request_error",
      param: "input[0].content[0].type",
      code: "invalid_value",
    });
    expect(json.error?.message).toBe(
      "Invalid request body: Does not match the OpenAPI CreateResponse schema: input[0].content[0].type: 'text' is not one of 'input_text', 'input_image', 'input_file'",
    );
    const recorded = server.requests.at(-1);
    expect(recorded?.schemaErrors).toEqual([
      {
        pointer: "/input/0/content/0/type",
        param: "input[0].content[0].type",
        message: "'text' is not one of 'input_text', 'input_image', 'input_file'",
        keyword: "enum",
      },
    ]);
    expect(recorded?.consumedStep).toBe(false);
  });

  it("rejects the DDR's conceptual forced choice, an input_image without detail, and unknown parameters", () => {
    expect(
      validateCreateResponse({ ...composed, tool_choice: { type: "tool", name: "agent_change_mode" } })
        .violations[0],
    ).toMatchObject({ param: "tool_choice.type", keyword: "enum" });

    const noDetail = validateCreateResponse({
      model: "gpt-5.1",
      input: [{ role: "user", content: [{ type: "input_image", image_url: "data:image/png;base64,AAAA" }] }],
    });
    expect(noDetail.violations).toEqual([
      expect.objectContaining({ param: "input[0].content[0].detail", message: "is required" }),
    ]);

    expect(validateCreateResponse({ model: "gpt-5.1", input: "x", mode: "general" }).violations).toEqual([
      expect.objectContaining({
        param: "mode",
        message: "Unknown parameter: 'mode'.",
        keyword: "unknownParameter",
      }),
    ]);
    expect(validateCreateResponse({ model: "gpt-5.1", input: "x", temperature: 3 }).message).toContain(
      "temperature: 3 is greater than 2",
    );
  });

  it("the SDK surfaces a schema rejection as BadRequestError", async () => {
    const openai = new OpenAI({ apiKey: "test", baseURL: server.baseUrl, maxRetries: 0 });
    const error = await openai.responses
      .create({
        model: "gpt-5.1",
        // biome-ignore lint/suspicious/noExplicitAny: deliberately off-type, as a careless caller would send it
        input: [{ role: "user", content: [{ type: "text", text: "x" }] as any }],
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("input[0].content[0].type");
  });

  it("answers invalid JSON with the real API's 400", async () => {
    const res = await fetch(`${server.baseUrl}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/^We could not parse the JSON body of your request/);
  });

  it("answers unknown routes with 404 Invalid URL", async () => {
    const res = await fetch(`${server.baseUrl}/chat/completions`, { method: "POST", body: "{}" });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
      "Invalid URL (POST /v1/chat/completions)",
    );
  });
});

describe("what the harness sends matches the document too", () => {
  it("Response objects validate against the Response schema", async () => {
    server.script(
      step.reply({
        reasoning: [{ summary: ["s"] }],
        text: "t",
        functionCalls: [{ name: "agent_change_mode", arguments: { mode: "general", reason: "r" } }],
      }),
      step.text("cut", { status: "incomplete" }),
    );
    for (let i = 0; i < 2; i++) {
      const { status, json } = await post(i === 0 ? composed : { model: "gpt-5.1", input: "x" });
      expect(status).toBe(200);
      expect(validateOpenAISchema("Response", json).violations).toEqual([]);
    }
  });

  it("stream events validate against the ResponseStreamEvent schema", async () => {
    server.script(
      step.reply({
        reasoning: [{ summary: ["thinking"] }],
        text: ["a", "b"],
        functionCalls: [{ name: "agent_change_mode", arguments: { mode: "general", reason: "r" } }],
      }),
    );
    const res = await fetch(`${server.baseUrl}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...composed, stream: true }),
    });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const text = await res.text();
    const frames = text.split("\n\n").filter((f) => f.trim() !== "");
    const events = frames.map((frame) => {
      const [eventLine, dataLine] = frame.split("\n");
      const data = JSON.parse((dataLine ?? "").replace(/^data: /, "")) as { type: string };
      expect(eventLine).toBe(`event: ${data.type}`);
      return data;
    });
    expect(events.length).toBeGreaterThan(10);
    for (const event of events) {
      expect({ type: event.type, ...validateOpenAISchema("ResponseStreamEvent", event) }).toMatchObject({
        type: event.type,
        violations: [],
      });
    }
  });
});
