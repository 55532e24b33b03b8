import { type AgentExecuteRequest, fail, type InvokeResult } from "@aptix/contracts";
import type { AgentService } from "@aptix/core";
import type { Hono } from "hono";
import type { AppEnv } from "../app-env.js";
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
    if (!/^application\/json\s*(;|$)/i.test(c.req.header("content-type") ?? "")) {
      return sendResult(c, fail("UNSUPPORTED_MEDIA_TYPE", "Send the request body as application/json."));
    }
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      return sendResult(
        c,
        fail("VALIDATION_FAILED", "The request body is not valid JSON.", {
          fields: [{ path: "", message: "is not valid JSON" }],
        }),
      );
    }
    const request = validate(body);
    if (!request.successful) return sendResult(c, request);
    const principal = c.get("principal");
    if (await service.streamsAnswer(request.result, principal)) {
      return sendEventStream(c, heartbeatMs, async (emit) => {
        await service.execute(request.result, principal, { onEvent: emit });
      });
    }
    return sendResult(c, await service.execute(request.result, principal));
  });
}
