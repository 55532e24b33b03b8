import { z } from "zod";
import { DEFAULT_REQUEST_LIMITS, type RequestLimits } from "../limits.js";
import { fail, type InvokeResult, ok } from "../result/invoke-result.js";
import { contractErrorMessages } from "../validation/error-messages.js";
import { reportFieldErrors } from "../validation/to-field-errors.js";
import { type ToolContinuationRequest, toolContinuationRequestSchema } from "./tool-continuation-request.js";
import { type UserTurnRequest, userTurnRequestSchema } from "./user-turn-request.js";

/**
 * The one request of `POST /v1/agent/execute` (AGN-034): a user turn or a tool continuation, told apart by
 * field presence (a continuation is the request that carries `toolResults`), never by a discriminator.
 */
export type AgentExecuteRequest = UserTurnRequest | ToolContinuationRequest;

/**
 * The request as one zod schema, for types, composition (OpenAPI, routers) and JSON Schema. Its errors are
 * zod's own, often one `invalid_union` issue ("Invalid input") with both scenarios' issues nested in it. To tell
 * a client what is wrong, use `createAgentExecuteRequestValidator(limits)`: it judges the body as one scenario
 * and answers VALIDATION_FAILED with readable field errors.
 */
export function createAgentExecuteRequestSchema(limits: Partial<RequestLimits> = {}) {
  const resolved = { ...DEFAULT_REQUEST_LIMITS, ...limits };
  return z.union([userTurnRequestSchema(resolved), toolContinuationRequestSchema(resolved)]);
}

/**
 * The request schema with the default limits. Its errors are zod's raw union issues, not meant for clients:
 * validate with `validateAgentExecuteRequest`, which answers VALIDATION_FAILED with readable field errors.
 */
export const AgentExecuteRequestSchema = createAgentExecuteRequestSchema();

export function isToolContinuationRequest(request: AgentExecuteRequest): request is ToolContinuationRequest {
  return "toolResults" in request;
}

/** Names a client might carry over from older DDRs (AGN-003, AGN-011): the server owns all of them. */
const SERVER_OWNED_FIELDS = new Set([
  "mode",
  "modeId",
  "modeDisplayName",
  "previousResponseId",
  "responseContinuationId",
  "conversationId",
  "toolsJson",
  "tools",
  "toolChoice",
  "toolChoiceName",
  "model",
  "provider",
]);

/**
 * Builds a validator that answers an InvokeResult: the typed request, or VALIDATION_FAILED whose
 * `details.fields` lists every failing field by path. It never throws, whatever it is given.
 */
export function createAgentExecuteRequestValidator(limits: Partial<RequestLimits> = {}) {
  const resolved = { ...DEFAULT_REQUEST_LIMITS, ...limits };
  const userTurn = userTurnRequestSchema(resolved);
  const continuation = toolContinuationRequestSchema(resolved);
  const userTurnFields = new Set(Object.keys(userTurn.shape));
  const continuationFields = new Set(Object.keys(continuation.shape));

  function describeUnknownKey(scenario: "user turn" | "tool continuation") {
    return (key: string, objectPath: readonly PropertyKey[]): string => {
      if (objectPath.length > 0) return "is not a known field here";
      if (SERVER_OWNED_FIELDS.has(key)) return "is server-owned and must not be sent: the service sets it";
      if (scenario === "tool continuation" && userTurnFields.has(key)) {
        return "is not allowed in a tool continuation, which carries only sessionId, turnId and toolResults";
      }
      const camel = key.charAt(0).toLowerCase() + key.slice(1);
      if (camel !== key && (userTurnFields.has(camel) || continuationFields.has(camel))) {
        return `is not a known field; JSON fields are camelCase: '${camel}'`;
      }
      return "is not a field of AgentExecuteRequest";
    };
  }

  return function validateAgentExecuteRequest(input: unknown): InvokeResult<AgentExecuteRequest> {
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      const fields = [{ path: "", message: "must be a JSON object" }];
      return fail("VALIDATION_FAILED", "The request must be a JSON object.", { fields });
    }
    const scenario = "toolResults" in input ? "tool continuation" : "user turn";
    const schema = scenario === "tool continuation" ? continuation : userTurn;
    const parsed = schema.safeParse(input, { error: contractErrorMessages });
    if (parsed.success) return ok(parsed.data);
    const { fields, summary } = reportFieldErrors(
      "request",
      parsed.error.issues,
      describeUnknownKey(scenario),
    );
    return fail("VALIDATION_FAILED", `Invalid ${scenario}: ${summary}.`, {
      scenario,
      fields,
    });
  };
}

export const validateAgentExecuteRequest = createAgentExecuteRequestValidator();
