import { fail, ok } from "@aptix/contracts";
import type { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../app-env.js";
import { sendResult } from "../send-result.js";

/** What `/healthz` and `/readyz` answer when all is well. */
export const ServiceStatusSchema = z.strictObject({ status: z.enum(["live", "ready"]) });
type ServiceStatus = z.infer<typeof ServiceStatusSchema>;

/**
 * What is ready now, as cheaply as possible (the server's reads a background status). `reason` is answered to
 * anyone, unauthenticated: it names what is down, never an address, host or driver message.
 */
export type ReadinessCheck = () => Promise<{ ready: boolean; reason?: string }>;

/**
 * Liveness says the process answers; readiness says it can serve turns (database reachable and migrated, MCP
 * servers connected).
 */
export function healthRoutes(app: Hono<AppEnv>, readiness: ReadinessCheck): void {
  app.get("/healthz", (c) => sendResult(c, ok<ServiceStatus>({ status: "live" })));
  app.get("/readyz", async (c) => {
    const check = await readiness().catch(() => ({ ready: false, reason: "the readiness check failed" }));
    return sendResult(
      c,
      check.ready
        ? ok<ServiceStatus>({ status: "ready" })
        : fail("NOT_READY", `Not ready: ${check.reason ?? "unknown"}`),
    );
  });
}
