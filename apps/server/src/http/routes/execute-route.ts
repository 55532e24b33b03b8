import {
  type AgentExecuteRequest,
  DEFAULT_REQUEST_LIMITS,
  type InvokeResult,
  ok,
  validateTurnRegenerateRequest,
} from "@aptix/contracts";
import type { AgentService } from "@aptix/core";
import { createRoute, type OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../app-env.js";
import { readJsonBody } from "../json-body.js";
import { TURN_PARAMS } from "../openapi/parameters.js";
import { EVENT_STREAM, FAILURES, jsonAnswer, jsonBody, OWNER_ONLY, schemaRef } from "../openapi/responses.js";
import { noted, sendResult } from "../send-result.js";
import { sendEventStream } from "./event-stream.js";

/** What the service answers a request (core names it only as `handle`'s result). */
type HandledRequest = Awaited<ReturnType<AgentService["handle"]>>;

export interface ExecuteRouteOptions {
  service: AgentService;
  validate: (input: unknown) => InvokeResult<AgentExecuteRequest>;
  heartbeatMs: number;
  /** The server's body limit (`APTIX_MAX_BODY_BYTES`), which the document states. */
  maxBodyBytes: number;
}

/** A user turn and a tool continuation, the two kinds of request, as the document shows them. */
const REQUEST_EXAMPLES = {
  userTurn: {
    summary: "A user turn, streamed",
    value: {
      sessionId: "s-42",
      turnId: "t-1",
      instruction: "Does the build pass?",
      inputArtifacts: [
        {
          relativePath: "src/build.ts",
          fileName: "build.ts",
          contents: "export const target = 'es2022';",
          origin: "ide",
        },
      ],
      stream: true,
    },
  },
  toolContinuation: {
    summary: "The results of the client tools a turn asked for",
    value: {
      sessionId: "s-42",
      turnId: "t-1",
      toolResults: [
        {
          toolCallId: "call_1",
          executionMs: 12,
          resultJson:
            '{"path":"src/build.ts","contents":"export const target = \'es2022\';","startLine":1,"endLine":1,"totalLines":1}',
        },
      ],
    },
  },
};

/** The 200 answer: final, or asking for client tools, as JSON or as server-sent events. */
const EXECUTED: RouteConfig["responses"][string] = {
  description:
    "The turn's AgentExecuteResponse: JSON, or server-sent events when the request asked to stream.",
  headers: {
    "Idempotent-Replayed": {
      description:
        "`true` when this request (same session, turn id and body) was sent before: its stored answer is " +
        "given again and no model was called. A failure stored then is replayed too: send a new `turnId` " +
        "to run the instruction again.",
      schema: { type: "string", enum: ["true"] },
    },
  },
  content: {
    "application/json": jsonAnswer("AgentExecuteResponse", {
      kind: "client_tool_continuation",
      sessionId: "s-42",
      turnId: "t-1",
      modeDisplayName: "General",
      toolCalls: [
        {
          toolCallId: "call_1",
          name: "read_file",
          argumentsJson: '{"path":"src/build.ts","startLine":null,"endLine":null}',
        },
      ],
    }),
    "text/event-stream": EVENT_STREAM,
  },
};

/** The 202 answer of a background turn: accepted, with where to read it. */
const ACCEPTED: RouteConfig["responses"][string] = {
  description:
    "With `background: true`: the turn is accepted and runs (or waits in its session's queue) with no client " +
    "waiting; `Location` is where to read it (`GET /v1/sessions/{sessionId}/turns/{turnId}`), and its events " +
    "route follows it live. Sent again, the same answer with the turn's status as it is then " +
    "(`Idempotent-Replayed: true` once it has ended).",
  headers: {
    Location: {
      description: "The turn's URL: `/v1/sessions/{sessionId}/turns/{turnId}`.",
      schema: { type: "string" },
    },
  },
  content: {
    "application/json": jsonAnswer("TurnAccepted", { sessionId: "s-42", turnId: "t-1", status: "running" }),
  },
};

/**
 * The route's document. The body is described by its component and read by the route itself, not by the
 * library: `requestBody` reads it under the size limit, and the server's validator (with its limits) answers a
 * bad one with VALIDATION_FAILED naming the field.
 */
function executeDefinition(maxBodyBytes: number) {
  const requestBody = {
    required: true,
    "x-aptix-max-body-bytes": maxBodyBytes,
    "x-aptix-request-limits": DEFAULT_REQUEST_LIMITS,
    content: {
      "application/json": {
        schema: schemaRef("AgentExecuteRequest"),
        examples: REQUEST_EXAMPLES,
      },
    },
  };
  return createRoute({
    method: "post",
    path: "/v1/agent/execute",
    operationId: "executeAgent",
    tags: ["Turns"],
    summary: "Run a user turn, or continue one with client tool results",
    description:
      "One request is a user turn (an instruction, artifacts or images) or a tool continuation (the results of " +
      "the client tools the turn asked for), told apart by its fields. The answer is final, or asks the client " +
      "to run tools and send their results with the same ids. With `stream: true` a turn that runs answers as " +
      "server-sent events; a request refused before its turn runs is answered as JSON with its status. With " +
      "`background: true` (not with `stream`) it is answered 202 at once and the turn runs with no client.\n\n" +
      'While the session\'s turn runs, a user turn is refused 409 SESSION_BUSY (`multitask: "reject"`, the ' +
      'default); `multitask: "enqueue"` keeps it `queued` until the turns before it end, then runs it (at ' +
      'most 8 queued per session, then 429 RATE_LIMITED); `multitask: "interrupt"` cancels the running turn ' +
      "and runs this one at once.\n\n" +
      `A body over ${maxBodyBytes} bytes (\`x-aptix-max-body-bytes\`) is refused with 413 PAYLOAD_TOO_LARGE ` +
      "before it is read as JSON. The request schema carries the size limits that JSON Schema can state; " +
      "`x-aptix-request-limits` holds all of them, as `createAgentExecuteRequestValidator` of " +
      "@aptix/contracts takes them (UTF-8 bytes of artifacts, their total, decoded image bytes…).",
    security: OWNER_ONLY,
    request: { body: requestBody },
    responses: {
      200: EXECUTED,
      202: ACCEPTED,
      ...FAILURES,
    },
  });
}

const regenerateTurn = createRoute({
  method: "post",
  path: "/v1/sessions/{sessionId}/turns/{turnId}/regenerate",
  operationId: "regenerateTurn",
  tags: ["Turns"],
  summary: "Answer the session's last turn again",
  description:
    "Rewinds the session before its last turn `turnId` (kept, `superseded`) and runs the same user input again " +
    "as the turn `newTurnId`, answered as a user turn is (JSON, or server-sent events with `stream: true`); the " +
    "model does not see the old answer. Sent again, the new turn's stored answer. A turn that is not the " +
    "session's last is 400 VALIDATION_FAILED naming `turnId`; 409 SESSION_BUSY while a turn is open.",
  security: OWNER_ONLY,
  request: {
    params: TURN_PARAMS,
    body: jsonBody("TurnRegenerateRequest", { newTurnId: "t-2b", stream: true }),
  },
  responses: { 200: EXECUTED, ...FAILURES },
});

/** A handled request as HTTP: JSON, or the event stream of a round that runs. */
function answerHandled(c: Context<AppEnv>, handled: HandledRequest, heartbeatMs: number) {
  // The stored answer of a request sent before, as Stripe's API marks one: no model was called for it.
  if (handled.replayed) c.header("Idempotent-Replayed", "true");
  if (handled.type === "answer") return sendResult(c, handled.result);
  if (handled.type === "accepted") {
    const { sessionId, turnId } = handled.accepted;
    c.header("Location", `/v1/sessions/${encodeURIComponent(sessionId)}/turns/${encodeURIComponent(turnId)}`);
    return c.json(noted(c, ok(handled.accepted)), 202);
  }
  return sendEventStream(c, heartbeatMs, () => handled.events);
}

/**
 * `POST /v1/agent/execute`: one AgentExecuteRequest, a user turn or a tool continuation; and
 * `POST …/turns/:turnId/regenerate`, a user turn made of the last one's input.
 */
export function executeRoute(app: OpenAPIHono<AppEnv>, options: ExecuteRouteOptions): void {
  const { service, validate, heartbeatMs } = options;
  app.openapi(executeDefinition(options.maxBodyBytes), async (c) => {
    const body = readJsonBody(c);
    if (!body.successful) return sendResult(c, body);
    const request = validate(body.result);
    if (!request.successful) return sendResult(c, request);
    // One core call answers both ways. A request refused before its turn runs (SESSION_BUSY,
    // TURN_ID_CONFLICT, …) is no turn event: it is answered as JSON with its status, and the event stream
    // opens only for a round that runs.
    return answerHandled(c, await service.handle(request.result, c.get("principal")), heartbeatMs);
  });
  app.openapi(regenerateTurn, async (c) => {
    const body = readJsonBody(c);
    const again = body.successful ? validateTurnRegenerateRequest(body.result) : body;
    if (!again.successful) return sendResult(c, again);
    const { sessionId, turnId } = c.req.valid("param");
    const principal = c.get("principal");
    const request = await service.regeneration(principal, sessionId, turnId, again.result);
    if (!request.successful) return sendResult(c, request);
    return answerHandled(c, await service.handle(request.result, principal), heartbeatMs);
  });
}
