import type { AgentExecuteRequest, InvokeResult } from "@aptix/contracts";
import type { AgentService } from "@aptix/core";
import type { Hono } from "hono";
import type { AppEnv } from "../app-env.js";
import { readJsonBody } from "../json-body.js";
import { sendResult } from "../send-result.js";
import { sendEventStream } from "./event-stream.js";

/** `POST /v1/agent/execute`: one AgentExecuteRequest, a user turn or a tool continuation (AGN-034). */
export function executeRoute(
  app: Hono<AppEnv>,
  service: AgentService,
  validate: (input: unknown) => InvokeResult<AgentExecuteRequest>,
  heartbeatMs: number,
): void {
  app.post("/v1/agent/execute", async (c) => {
    const body = readJsonBody(c);
    if (!body.successful) return sendResult(c, body);
    const request = validate(body.result);
    if (!request.successful) return sendResult(c, request);
    // One core call answers both ways. A request refused before its turn runs (SESSION_BUSY,
    // TURN_ID_CONFLICT, …) is no turn event: it is answered as JSON with its status, and the event stream
    // opens only for a round that runs.
    const handled = await service.handle(request.result, c.get("principal"));
    if (handled.type === "answer") return sendResult(c, handled.result);
    return sendEventStream(c, heartbeatMs, async (emit) => {
      for await (const event of handled.events) emit(event);
    });
  });
}
