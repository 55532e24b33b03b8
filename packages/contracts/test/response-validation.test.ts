import { describe, expect, it } from "vitest";
import {
  type AgentExecuteResponse,
  AgentExecuteResponseSchema,
  ClientToolContinuationResponseSchema,
  FinalResponseSchema,
  httpStatusOf,
  validateAgentExecuteResponse,
} from "../src/index.js";
import { expectVectorFailure } from "./support/expect-failure.js";
import { responseVectors } from "./vectors/response-vectors.js";
import type { InvalidVector, ValidVector } from "./vectors/vector.js";

const valid = responseVectors.filter((vector): vector is ValidVector => vector.valid);
const invalid = responseVectors.filter((vector): vector is InvalidVector => !vector.valid);

describe("response vectors", () => {
  it("are JSON documents with unique names", () => {
    const names = responseVectors.map((vector) => vector.name);
    expect(new Set(names).size).toBe(names.length);
    for (const vector of responseVectors)
      expect(JSON.parse(vector.json ?? JSON.stringify(vector.input))).toEqual(vector.input);
  });

  it("cover both kinds and both JSON Schema verdicts", () => {
    const kinds = valid.map((vector) => (vector.input as { kind: string }).kind);
    expect(new Set(kinds)).toEqual(new Set(["final", "client_tool_continuation"]));
    expect(invalid.filter((vector) => vector.jsonSchema === "rejects").length).toBeGreaterThanOrEqual(20);
    expect(invalid.filter((vector) => vector.jsonSchema === "zod-only").length).toBeGreaterThanOrEqual(3);
  });
});

describe("validateAgentExecuteResponse accepts valid responses", () => {
  it.each(valid)("$name", (vector) => {
    const result = validateAgentExecuteResponse(vector.input);
    expect(result).toEqual({ successful: true, result: vector.input, errors: [], warnings: [] });
  });
});

describe("validateAgentExecuteResponse rejects invalid responses with exactly the failing paths", () => {
  it.each(invalid)("$name", (vector) => {
    const result = validateAgentExecuteResponse(vector.input);
    expectVectorFailure(result, vector);
    if (result.successful) return;
    expect(httpStatusOf(result.errors[0].code)).toBe(400);
    expect(result.errors[0].details).not.toHaveProperty("scenario");
  });
});

describe("response schemas", () => {
  it("agree with the validator on every vector", () => {
    for (const vector of responseVectors) {
      expect(AgentExecuteResponseSchema.safeParse(vector.input).success, vector.name).toBe(vector.valid);
    }
  });

  it("the per-kind schemas each take only their own kind", () => {
    for (const vector of valid) {
      const kind = (vector.input as AgentExecuteResponse).kind;
      expect(FinalResponseSchema.safeParse(vector.input).success, vector.name).toBe(kind === "final");
      expect(ClientToolContinuationResponseSchema.safeParse(vector.input).success, vector.name).toBe(
        kind === "client_tool_continuation",
      );
    }
  });

  it("narrow by kind", () => {
    const texts: string[] = [];
    for (const vector of valid) {
      const result = validateAgentExecuteResponse(vector.input);
      if (!result.successful) throw new Error(vector.name);
      const response = result.result;
      switch (response.kind) {
        case "final":
          texts.push(response.primaryOutputText);
          break;
        case "client_tool_continuation":
          texts.push(...response.toolCalls.map((call) => call.name));
          break;
        default: {
          const unreachable: never = response;
          throw new Error(`unexpected ${JSON.stringify(unreachable)}`);
        }
      }
    }
    expect(texts).toContain("read_file");
  });
});
