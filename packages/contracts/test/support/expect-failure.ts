import { expect } from "vitest";
import type { FieldError, InvokeResult } from "../../src/index.js";
import type { InvalidVector } from "../vectors/vector.js";

/** zod's own wording: a client must never see it. */
const RAW_ZOD_MESSAGES = [
  /^Invalid\b/,
  /^Too (?:big|small)/,
  /^Unrecognized key/,
  /^Required$/,
  /expected .+, received/i,
  /^Invalid input/,
];

/** A field message reads as the rest of a sentence that starts with the field's path: "sessionId is required". */
function expectHumanMessage(message: unknown): void {
  expect(message).toBeTypeOf("string");
  const text = message as string;
  expect(text.trim()).not.toBe("");
  expect(text).toBe(text.trim());
  expect(text, `"${text}" should continue a sentence after the field path`).toMatch(/^[a-z]/);
  for (const raw of RAW_ZOD_MESSAGES) expect(text, `"${text}" is zod's wording`).not.toMatch(raw);
}

/** The field errors of a failed validation, after checking the envelope around them. */
export function expectValidationFailure(result: InvokeResult<unknown>): FieldError[] {
  expect(result.successful).toBe(false);
  expect(result).not.toHaveProperty("result");
  expect(result.warnings).toEqual([]);
  expect(result.errors).toHaveLength(1);
  const [error] = result.errors;
  expect(error?.code).toBe("VALIDATION_FAILED");
  expect(error?.message).toMatch(
    /^(?:Invalid (?:user turn|tool continuation|response): .+|The request must be a JSON object)\.$/s,
  );
  const fields = (error?.details as { fields?: unknown } | undefined)?.fields;
  expect(Array.isArray(fields)).toBe(true);
  const list = fields as FieldError[];
  expect(list.length).toBeGreaterThan(0);
  // At most 20 problems, then one entry counting the rest.
  expect(list.length).toBeLessThanOrEqual(21);
  for (const [index, field] of list.entries()) {
    expect(Object.keys(field).sort()).toEqual(["message", "path"]);
    expect(field.path).toBeTypeOf("string");
    if (index === 20) expect(field).toEqual({ path: "", message: expect.stringMatching(/^… and \d+ more$/) });
    else expectHumanMessage(field.message);
  }
  return list;
}

/** Checks a failure against an invalid vector: exactly its paths, and its message fragments where it pins any. */
export function expectVectorFailure(result: InvokeResult<unknown>, vector: InvalidVector): FieldError[] {
  const fields = expectValidationFailure(result);
  expect(fields.map((field) => field.path).sort()).toEqual([...vector.paths].sort());
  for (const [path, fragment] of Object.entries(vector.messages ?? {})) {
    const messages = fields.filter((field) => field.path === path).map((field) => field.message);
    expect(messages, `message of "${path}"`).toEqual(
      expect.arrayContaining([expect.stringContaining(fragment)]),
    );
  }
  return fields;
}
