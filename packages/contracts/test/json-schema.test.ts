import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { Ajv2020, type ErrorObject, type Options, type ValidateFunction } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  contractJsonSchemas,
  createAgentExecuteRequestSchema,
  ERROR_CODES,
  fail,
  formatFieldPath,
  ok,
  type RequestLimits,
  validateAgentExecuteRequest,
  validateAgentExecuteResponse,
} from "../src/index.js";
import { requestVectors } from "./vectors/request-vectors.js";
import { responseVectors } from "./vectors/response-vectors.js";
import type { Vector } from "./vectors/vector.js";

const WRITE_COMMAND = "pnpm --filter @aptix/contracts schema:write";

/** The files as a client gets them: through the package's `./schema/*.json` export. */
const require = createRequire(import.meta.url);
const schemaPath = (file: string) => require.resolve(`@aptix/contracts/schema/${file}`);
const readSchema = (file: string): object => JSON.parse(readFileSync(schemaPath(file), "utf8"));

const REQUEST = "agent-execute-request.schema.json";
const RESPONSE = "agent-execute-response.schema.json";
const INVOKE_RESULT = "invoke-result.schema.json";

/**
 * Ajv for draft 2020-12 with every error reported. Strict mode stays on except where a schema needs it off:
 * - request: `strictTypes` off, because its `if`/`then`/`else` and `anyOf` fragments constrain properties whose
 *   `type` is declared once, beside them, in `properties`;
 * - response and InvokeResult: strict, with `date-time` registered as a known but unchecked format. zod writes
 *   the format next to a `pattern` holding its own date-time regex, and that pattern is what gets checked.
 */
const AJV_OPTIONS: Record<string, Options> = {
  [REQUEST]: { allErrors: true, strictTypes: false },
  [RESPONSE]: { allErrors: true, formats: { "date-time": true } },
  [INVOKE_RESULT]: { allErrors: true, formats: { "date-time": true } },
};

const compile = (file: string, schema: object = readSchema(file)): ValidateFunction =>
  new Ajv2020(AJV_OPTIONS[file]).compile(schema);

/** What `contractJsonSchemas` does for the request, with the vector's limits instead of the defaults. */
const requestJsonSchema = (limits: Partial<RequestLimits>) =>
  z.toJSONSchema(createAgentExecuteRequestSchema(limits), { target: "draft-2020-12", io: "input" });

/**
 * The field an Ajv error is about, written as a vector path: `/toolResults/0` becomes `toolResults[0]`, and a
 * `required` or `additionalProperties` error, reported on the object, names its property as zod does.
 */
const ajvErrorPath = (error: ErrorObject): string => {
  const path: PropertyKey[] = error.instancePath
    .split("/")
    .slice(1)
    .map((segment) => segment.replaceAll("~1", "/").replaceAll("~0", "~"))
    .map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment));
  if (error.keyword === "required") path.push(String(error.params.missingProperty));
  if (error.keyword === "additionalProperties") path.push(String(error.params.additionalProperty));
  return formatFieldPath(path);
};

/**
 * The document-level error of the top-level union (request: user turn or tool continuation; response: the two
 * kinds). It only says that no branch matched, so it would "point at" `""` for every vector; the errors inside
 * the branches are the ones that name fields.
 */
const UNION_SUMMARY_ERRORS = new Set(["#/anyOf", "#/oneOf"]);

const expectJsonSchemaVerdict = (validate: ValidateFunction, vector: Vector) => {
  const accepted = validate(vector.input);
  const errors = JSON.stringify(validate.errors, null, 1);
  if (vector.valid) {
    expect(accepted, `JSON Schema rejects a valid document: ${errors}`).toBe(true);
    return;
  }
  if (vector.jsonSchema === "zod-only") {
    expect(accepted, `JSON Schema now rejects a zod-only vector; mark it "rejects": ${errors}`).toBe(true);
    return;
  }
  expect(accepted, "JSON Schema accepts an invalid document").toBe(false);
  // Not only the verdict: Ajv must find every field wrong that zod does (it may find more: it reports both
  // branches of a union, where zod judges the one the body's scenario or kind selects).
  const pointed = new Set(
    (validate.errors ?? []).filter((error) => !UNION_SUMMARY_ERRORS.has(error.schemaPath)).map(ajvErrorPath),
  );
  expect(
    vector.paths.filter((path) => !pointed.has(path)),
    `Ajv's errors do not point at every path of the vector; they point at ${JSON.stringify([...pointed])}`,
  ).toEqual([]);
};

describe("checked-in schema/*.json", () => {
  const generated = contractJsonSchemas();

  it("are exactly the files contractJsonSchemas() writes", () => {
    const onDisk = readdirSync(dirname(schemaPath(REQUEST))).filter((file) => file.endsWith(".json"));
    expect(onDisk.sort(), `schema/ differs from contractJsonSchemas(): run \`${WRITE_COMMAND}\``).toEqual(
      Object.keys(generated).sort(),
    );
  });

  it.each(Object.keys(generated))("%s equals contractJsonSchemas() output", (file) => {
    const text = readFileSync(schemaPath(file), "utf8");
    expect(text, `schema/${file} is out of date: run \`${WRITE_COMMAND}\` and commit the result`).toBe(
      `${JSON.stringify(generated[file], null, 2)}\n`,
    );
  });

  it.each(Object.keys(generated))("%s compiles with Ajv 2020-12", (file) => {
    expect(() => compile(file)).not.toThrow();
    expect(readSchema(file)).toMatchObject({ $schema: "https://json-schema.org/draft/2020-12/schema" });
  });

  it("the request schema rebuilt with default limits is the published one", () => {
    const { $id, title, ...published } = readSchema(REQUEST) as Record<string, unknown>;
    expect($id).toBe("https://aptix.dev/schemas/agent/v1/agent-execute-request.schema.json");
    expect(title).toBe("AgentExecuteRequest");
    expect(requestJsonSchema({})).toEqual(published);
  });
});

describe("agent-execute-request.schema.json agrees with the zod validator", () => {
  const published = compile(REQUEST);
  const defaults = requestVectors.filter((vector) => vector.limits === undefined);
  const limited = requestVectors.filter((vector) => vector.limits !== undefined);

  it.each(defaults)("$name", (vector) => {
    expectJsonSchemaVerdict(published, vector);
  });

  // The checked-in file holds the default limits; these vectors use smaller ones, so their schema is built
  // from createAgentExecuteRequestSchema(limits) exactly as the published file is built from the defaults.
  const byLimits = new Map<string, ValidateFunction>();
  const compileFor = (limits: Partial<RequestLimits>) => {
    const key = JSON.stringify(limits);
    const validate = byLimits.get(key) ?? compile(REQUEST, requestJsonSchema(limits));
    byLimits.set(key, validate);
    return validate;
  };

  it.each(limited)("$name (schema built with the vector's limits)", (vector) => {
    expectJsonSchemaVerdict(compileFor(vector.limits ?? {}), vector);
  });
});

describe("agent-execute-response.schema.json agrees with the zod validator", () => {
  const validate = compile(RESPONSE);

  it.each(responseVectors)("$name", (vector) => {
    expectJsonSchemaVerdict(validate, vector);
  });
});

describe("invoke-result.schema.json", () => {
  const validate = compile(INVOKE_RESULT);
  const accepts = (document: unknown) => {
    const accepted = validate(document);
    expect(accepted, JSON.stringify(validate.errors, null, 1)).toBe(true);
  };

  it("accepts every valid response wrapped in a success, with and without warnings", () => {
    for (const vector of responseVectors.filter((each) => each.valid)) {
      accepts(ok(vector.input));
      accepts(ok(vector.input, [{ code: "SLOW_PROVIDER", message: "The provider took 40 s." }]));
    }
  });

  it("treats a response inside a success as the response schema does", () => {
    for (const vector of responseVectors.filter((each) => !each.valid)) {
      const expected = vector.jsonSchema === "zod-only";
      expect(validate(ok(vector.input)), vector.name).toBe(expected);
    }
  });

  it("accepts a failure for every error code, with and without details", () => {
    for (const code of ERROR_CODES) {
      accepts(fail(code, `Failed with ${code}.`));
      accepts(fail(code, `Failed with ${code}.`, { status: 529, requestId: "req_1" }));
    }
  });

  it("accepts every failure the validators produce", () => {
    for (const vector of requestVectors.filter((each) => !each.valid && each.limits === undefined)) {
      accepts(validateAgentExecuteRequest(vector.input));
    }
    for (const vector of responseVectors.filter((each) => !each.valid)) {
      accepts(validateAgentExecuteResponse(vector.input));
    }
  });

  const final = responseVectors[0]?.input;
  it.each([
    ["a success with an error", { ...ok(final), errors: [{ code: "INTERNAL", message: "x" }] }],
    ["a success without result", { successful: true, errors: [], warnings: [] }],
    ["a failure without errors", { successful: false, errors: [], warnings: [] }],
    ["a failure with a result key", { ...fail("INTERNAL", "x"), result: final }],
    ["a failure with result null", { ...fail("INTERNAL", "x"), result: null }],
    [
      "an unknown error code",
      { successful: false, errors: [{ code: "TEAPOT", message: "x" }], warnings: [] },
    ],
    [
      "an error with an empty message",
      { successful: false, errors: [{ code: "INTERNAL", message: "" }], warnings: [] },
    ],
    ["warnings missing", { successful: true, result: final, errors: [] }],
    ["a warning with a lowercase code", ok(final, [{ code: "note", message: "x" }])],
    ["an unknown top-level field", { ...ok(final), traceId: "abc" }],
  ])("rejects %s", (_label, document) => {
    expect(validate(document)).toBe(false);
  });
});
