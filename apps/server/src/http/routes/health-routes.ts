import { fail, ok } from "@aptix/contracts";
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { z } from "zod";
import type { AppEnv } from "../app-env.js";
import { failuresOf, PUBLIC, success } from "../openapi/responses.js";
import { sendResult } from "../send-result.js";

/** What `/healthz` and `/readyz` answer when all is well. */
export const ServiceStatusSchema = z.strictObject({
  status: z.enum(["live", "ready"]),
  /** Ready, but these parts work by a slower path (the turn listener: cancels and streams poll). */
  degraded: z.array(z.string()).optional(),
});
type ServiceStatus = z.infer<typeof ServiceStatusSchema>;

/**
 * What is ready now, as cheaply as possible (the server's reads a background status). `reason` is answered to
 * anyone, unauthenticated: it names what is down, never an address, host or driver message.
 */
export type ReadinessCheck = () => Promise<{ ready: boolean; reason?: string; degraded?: string[] }>;

const liveness = createRoute({
  method: "get",
  path: "/healthz",
  operationId: "getLiveness",
  tags: ["Service"],
  summary: "Liveness",
  description: "Answers while the process serves HTTP, whatever the state of its database.",
  security: PUBLIC,
  responses: {
    200: success("ServiceStatus", "The process is live.", { status: "live" }),
    // In local mode, to a caller from elsewhere.
    ...failuresOf(403),
  },
});

const readinessRoute = createRoute({
  method: "get",
  path: "/readyz",
  operationId: "getReadiness",
  tags: ["Service"],
  summary: "Readiness",
  description:
    "Whether the service can run turns: its database reachable and migrated, its MCP servers connected. It is " +
    "read from a status a background check refreshes; a 503 names what is down, never an address.",
  security: PUBLIC,
  responses: {
    200: success("ServiceStatus", "The service can run turns.", { status: "ready" }),
    // 503 when not ready; 403 in local mode to a caller from elsewhere.
    ...failuresOf(403, 503),
  },
});

/**
 * Liveness says the process answers; readiness says it can serve turns (database reachable and migrated, MCP
 * servers connected).
 */
export function healthRoutes(app: OpenAPIHono<AppEnv>, readiness: ReadinessCheck): void {
  app.openapi(liveness, (c) => sendResult(c, ok<ServiceStatus>({ status: "live" })));
  app.openapi(readinessRoute, async (c) => {
    const check = await readiness().catch(() => ({ ready: false, reason: "the readiness check failed" }));
    return sendResult(
      c,
      check.ready
        ? ok<ServiceStatus>({ status: "ready", ...("degraded" in check ? { degraded: check.degraded } : {}) })
        : fail("NOT_READY", `Not ready: ${check.reason ?? "unknown"}`),
    );
  });
}
