import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  AgentExecuteResultSchema,
  ERROR_CODES,
  ERROR_HTTP_STATUS,
  type ErrorCode,
  fail,
  httpStatusOf,
  type InvokeFailure,
  invokeResultSchema,
  ok,
  validateAgentExecuteRequest,
} from "../src/index.js";

/** docs/http-api.md: 400 validation, 401 auth, 403 refused origin, 404 unknown, 405 wrong method, 410 expired file, 409 conflict, 413 too large, 502 provider, 503 not ready, 500 bug. */
const EXPECTED_STATUS: Record<ErrorCode, number> = {
  VALIDATION_FAILED: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  SESSION_NOT_FOUND: 404,
  TURN_NOT_FOUND: 404,
  FILE_NOT_FOUND: 404,
  FILE_EXPIRED: 410,
  WORKSPACE_NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  SESSION_BUSY: 409,
  TURN_ID_CONFLICT: 409,
  TOOL_RESULTS_MISMATCH: 409,
  TURN_NOT_AWAITING_TOOLS: 409,
  TURN_CANCELLED: 409,
  PAYLOAD_TOO_LARGE: 413,
  QUOTA_EXCEEDED: 413,
  CONTEXT_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  BUDGET_EXCEEDED: 429,
  PROVIDER_ERROR: 502,
  ITERATION_LIMIT_EXCEEDED: 502,
  NOT_READY: 503,
  TURN_INTERRUPTED: 503,
  TOOL_FAILED: 502,
  INTERNAL: 500,
};

const final = {
  kind: "final",
  sessionId: "s1",
  turnId: "t1",
  modeDisplayName: "General",
  primaryOutputText: "Done.",
} as const;

const numberResult = invokeResultSchema(z.number());

describe("error codes", () => {
  it("ERROR_CODES lists exactly the codes this test knows", () => {
    expect([...ERROR_CODES].sort()).toEqual(Object.keys(EXPECTED_STATUS).sort());
    expect(Object.keys(ERROR_HTTP_STATUS)).toEqual(ERROR_CODES);
  });

  it.each(Object.entries(EXPECTED_STATUS))("httpStatusOf(%s) is %i", (code, status) => {
    expect(httpStatusOf(code as ErrorCode)).toBe(status);
  });
});

describe("ok", () => {
  it("is a success with the result, empty errors and the given warnings", () => {
    expect(ok(42)).toEqual({ successful: true, result: 42, errors: [], warnings: [] });
    const warnings = [{ code: "DEPRECATED_FIELD", message: "stream is ignored" }];
    expect(ok(final, warnings)).toEqual({ successful: true, result: final, errors: [], warnings });
  });

  it("keeps a falsy result under its key", () => {
    for (const value of [0, "", null, false]) {
      const success = ok(value);
      expect(success).toHaveProperty("result", value);
      expect(success.errors).toEqual([]);
    }
  });

  it("passes invokeResultSchema", () => {
    expect(numberResult.safeParse(ok(42)).success).toBe(true);
    expect(AgentExecuteResultSchema.safeParse(ok(final)).success).toBe(true);
  });
});

describe("fail", () => {
  it.each(ERROR_CODES)("%s: one error, no result key, passes invokeResultSchema", (code) => {
    const failure: InvokeFailure = fail(code, `Something about ${code}.`);
    expect(failure).toEqual({
      successful: false,
      errors: [{ code, message: `Something about ${code}.` }],
      warnings: [],
    });
    expect(failure).not.toHaveProperty("result");
    expect(failure.errors.length).toBeGreaterThanOrEqual(1);
    expect(failure.errors[0]).not.toHaveProperty("details");
    expect(AgentExecuteResultSchema.safeParse(failure).success).toBe(true);
    expect(numberResult.safeParse(failure).success).toBe(true);
  });

  it("carries details and warnings when given", () => {
    const failure = fail(
      "PROVIDER_ERROR",
      "The provider answered 529.",
      { status: 529, requestId: "req_1" },
      [{ code: "RETRIED", message: "Retried twice." }],
    );
    expect(failure.errors[0]).toEqual({
      code: "PROVIDER_ERROR",
      message: "The provider answered 529.",
      details: { status: 529, requestId: "req_1" },
    });
    expect(failure.warnings).toEqual([{ code: "RETRIED", message: "Retried twice." }]);
    expect(AgentExecuteResultSchema.safeParse(failure).success).toBe(true);
  });

  it("a validator's failure is a valid InvokeResult of any result type", () => {
    const failure = validateAgentExecuteRequest({ sessionId: "s1" });
    expect(failure.successful).toBe(false);
    expect(AgentExecuteResultSchema.safeParse(failure).success).toBe(true);
  });
});

describe("invokeResultSchema", () => {
  const rejected: [string, unknown][] = [
    ["a success with an error", { ...ok(1), errors: [{ code: "INTERNAL", message: "x" }] }],
    ["a success without result", { successful: true, errors: [], warnings: [] }],
    ["a success whose result has the wrong type", ok("1")],
    ["a failure without errors", { successful: false, errors: [], warnings: [] }],
    ["a failure with a result key", { ...fail("INTERNAL", "x"), result: 1 }],
    ["a failure with result null", { ...fail("INTERNAL", "x"), result: null }],
    [
      "an unknown error code",
      { successful: false, errors: [{ code: "TEAPOT", message: "x" }], warnings: [] },
    ],
    [
      "an error with an empty message",
      { successful: false, errors: [{ code: "INTERNAL", message: "" }], warnings: [] },
    ],
    [
      "an error with an unknown field",
      { ...fail("INTERNAL", "x"), errors: [{ code: "INTERNAL", message: "x", at: 1 }] },
    ],
    [
      "details that are not an object",
      { successful: false, errors: [{ code: "INTERNAL", message: "x", details: [] }], warnings: [] },
    ],
    ["warnings missing", { successful: true, result: 1, errors: [] }],
    ["a warning with a lowercase code", ok(1, [{ code: "note", message: "x" }])],
    ["successful not a boolean", { ...ok(1), successful: "true" }],
    ["an unknown top-level field", { ...ok(1), traceId: "abc" }],
  ];

  it.each(rejected)("rejects %s", (_label, document) => {
    expect(numberResult.safeParse(document).success).toBe(false);
  });
});
