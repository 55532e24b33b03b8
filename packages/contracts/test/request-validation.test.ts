import { describe, expect, it } from "vitest";
import {
  type AgentExecuteRequest,
  createAgentExecuteRequestValidator,
  httpStatusOf,
  isToolContinuationRequest,
  type RequestLimits,
  validateAgentExecuteRequest,
} from "../src/index.js";
import { expectVectorFailure } from "./support/expect-failure.js";
import { requestVectors } from "./vectors/request-vectors.js";
import type { InvalidVector, RequestVector, ValidVector } from "./vectors/vector.js";

const validatorFor = (limits: Partial<RequestLimits> | undefined) =>
  limits === undefined ? validateAgentExecuteRequest : createAgentExecuteRequestValidator(limits);

const isObject = (value: unknown): value is object =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const valid = requestVectors.filter((vector): vector is ValidVector & RequestVector => vector.valid);
const invalid = requestVectors.filter((vector): vector is InvalidVector & RequestVector => !vector.valid);

describe("request vectors", () => {
  it("are JSON documents with unique names", () => {
    const names = requestVectors.map((vector) => vector.name);
    expect(new Set(names).size).toBe(names.length);
    for (const vector of requestVectors)
      expect(JSON.parse(vector.json ?? JSON.stringify(vector.input))).toEqual(vector.input);
  });

  it("cover both outcomes and both JSON Schema verdicts", () => {
    expect(valid.length).toBeGreaterThanOrEqual(15);
    expect(invalid.filter((vector) => vector.jsonSchema === "rejects").length).toBeGreaterThanOrEqual(40);
    expect(invalid.filter((vector) => vector.jsonSchema === "zod-only").length).toBeGreaterThanOrEqual(5);
  });
});

describe("validateAgentExecuteRequest accepts valid requests", () => {
  it.each(valid)("$name", (vector) => {
    const result = validatorFor(vector.limits)(vector.input);
    expect(result).toEqual({ successful: true, result: vector.input, errors: [], warnings: [] });
    if (!result.successful) return;
    const request: AgentExecuteRequest = result.result;
    expect(isToolContinuationRequest(request)).toBe("toolResults" in (vector.input as object));
  });
});

describe("validateAgentExecuteRequest rejects invalid requests with exactly the failing paths", () => {
  it.each(invalid)("$name", (vector) => {
    const result = validatorFor(vector.limits)(vector.input);
    expectVectorFailure(result, vector);
    if (result.successful) return;
    const [error] = result.errors;
    expect(httpStatusOf(error.code)).toBe(400);
    // The scenario the validator judged the body as: told apart by the presence of toolResults (AGN-034 §3).
    const expectedScenario = !isObject(vector.input)
      ? undefined
      : "toolResults" in vector.input
        ? "tool continuation"
        : "user turn";
    expect(error.details?.scenario).toBe(expectedScenario);
    if (expectedScenario !== undefined)
      expect(error.message).toMatch(new RegExp(`^Invalid ${expectedScenario}: `));
    // Users read these: they name fields, never the design records behind the rules.
    expect(JSON.stringify(result.errors)).not.toMatch(/AGN-\d/);
  });
});

describe("vectors with overridden limits", () => {
  const limited = invalid.filter((vector) => vector.limits !== undefined);

  it.each(limited)(
    "$name: passes the default limits, so the overridden limit is what it breaks",
    (vector) => {
      expect(validateAgentExecuteRequest(vector.input).successful).toBe(true);
    },
  );
});

describe("validator", () => {
  it("summarizes at most three fields and counts the rest", () => {
    const result = validateAgentExecuteRequest({
      a: 1,
      b: 2,
      c: 3,
      d: 4,
      e: 5,
      sessionId: "s",
      turnId: "t",
      instruction: "x",
    });
    expect(result.successful).toBe(false);
    if (result.successful) return;
    expect(result.errors[0].message).toBe(
      "Invalid user turn: a is not a field of AgentExecuteRequest; b is not a field of AgentExecuteRequest; " +
        "c is not a field of AgentExecuteRequest (and 2 more).",
    );
  });

  it("names at most 20 problems, then counts the rest, in a body under 16 KiB whatever the names", () => {
    const keys = Array.from({ length: 100_000 }, (_, index) => [`k${index}`, 0]);
    const result = validateAgentExecuteRequest(Object.fromEntries(keys));
    expect(result.successful).toBe(false);
    if (result.successful) return;
    const fields = (result.errors[0].details as { fields: Array<{ path: string; message: string }> }).fields;
    expect(fields).toHaveLength(21);
    // sessionId and turnId are missing, then come the 100,000 keys.
    expect(fields[19]).toEqual({ path: "k17", message: "is not a field of AgentExecuteRequest" });
    expect(fields[20]).toEqual({ path: "", message: "… and 99982 more" });
    expect(result.errors[0].message).toMatch(/ \(and 99999 more\)\.$/);

    // Names of control characters, the costliest JSON: 21 of them still make a small body.
    const long = (index: number) => `${"\u0001".repeat(10_000)}${index}`;
    const costly = validateAgentExecuteRequest(
      Object.fromEntries(Array.from({ length: 30 }, (_, index) => [long(index), 0])),
    );
    expect(Buffer.byteLength(JSON.stringify(costly))).toBeLessThanOrEqual(16 * 1024);
    expect(costly.successful).toBe(false);
    if (costly.successful) return;
    const [, , firstKey] = (costly.errors[0].details as { fields: Array<{ path: string }> }).fields;
    expect(firstKey?.path).toBe(`${"\u0001".repeat(32)}…`);
  });

  it("reads a whole-document error as a sentence in the summary", () => {
    const result = validateAgentExecuteRequest({ sessionId: "s", turnId: "t" });
    expect(result.successful).toBe(false);
    if (result.successful) return;
    expect(result.errors[0].message).toBe(
      "Invalid user turn: a user turn needs at least one of instruction, inputArtifacts or clipboardImages.",
    );
  });

  it("does not share state between validators with different limits", () => {
    const small = createAgentExecuteRequestValidator({ maxInstructionChars: 3 });
    const body = { sessionId: "s", turnId: "t", instruction: "four" };
    expect(small(body).successful).toBe(false);
    expect(validateAgentExecuteRequest(body).successful).toBe(true);
    expect(small({ ...body, instruction: "abc" }).successful).toBe(true);
  });

  it("calls NaN a non-finite number, as it does Infinity (a JSON 1e400), rather than 'not a number'", () => {
    const result = validateAgentExecuteRequest({
      sessionId: "s",
      turnId: "t",
      toolResults: [{ toolCallId: "c1", executionMs: Number.NaN, resultJson: "1" }],
    });
    expect(result.successful).toBe(false);
    if (result.successful) return;
    expect(result.errors[0].details?.fields).toEqual([
      { path: "toolResults[0].executionMs", message: "must be a number, not a non-finite number (NaN)" },
    ]);
  });

  it("never throws on values JSON cannot carry", () => {
    for (const input of [undefined, Symbol("x"), () => 1, 10n, new Date(0), new Map(), Object.create(null)]) {
      expect(() => validateAgentExecuteRequest(input)).not.toThrow();
      expect(validateAgentExecuteRequest(input).successful).toBe(false);
    }
  });

  it("names a text field holding an object with a prototype-less `length`, instead of throwing", () => {
    // Found by the junk property test: zod ran the length checks on it, and comparing the `length` threw.
    const result = validateAgentExecuteRequest({
      sessionId: "A",
      turnId: "A",
      instruction: "a",
      solutionContextText: { length: Object.create(null) },
    });
    expect(!result.successful && result.errors[0].details).toStrictEqual({
      scenario: "user turn",
      fields: [{ path: "solutionContextText", message: "must be a string, not an object" }],
    });
  });
});
