import { ok, UsageQuerySchema, validateUsageQuery } from "@aptix/contracts";
import { type AgentService, type Clock, UsageReports } from "@aptix/core";
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../app-env.js";
import { queryParameters } from "../openapi/parameters.js";
import { FAILURES, OWNER_ONLY, success } from "../openapi/responses.js";
import { sendResult } from "../send-result.js";

const getUsage = createRoute({
  method: "get",
  path: "/v1/usage",
  operationId: "getUsage",
  tags: ["Usage"],
  summary: "Get the caller's usage and cost",
  description:
    "The caller's LLM usage (every call, compaction summaries included) and its cost in USD by the price table, " +
    "summed by UTC day, model or session, with the total the buckets add up to. A cost is null when a call used " +
    "a model the price table does not price. `from` and `to` come together; without them, the current UTC month.",
  security: OWNER_ONLY,
  parameters: queryParameters(UsageQuerySchema, {
    from: { description: "The first UTC date counted (YYYY-MM-DD).", example: "2026-03-01" },
    to: { description: "The last UTC date counted, at most 366 days after `from`.", example: "2026-03-31" },
    groupBy: { description: "`day` (the default), `model` or `session`.", example: "model" },
  }),
  responses: {
    200: success("UsageReport", "The caller's usage in the range.", {
      buckets: [
        {
          key: "gpt-5.1",
          inputTokens: 184_000,
          cachedInputTokens: 120_000,
          outputTokens: 9_600,
          llmCalls: 42,
          costUsd: 0.191,
        },
      ],
      total: {
        inputTokens: 184_000,
        cachedInputTokens: 120_000,
        outputTokens: 9_600,
        llmCalls: 42,
        costUsd: 0.191,
      },
    }),
    ...FAILURES,
  },
});

/** `GET /v1/usage` (DESIGN §17): only ever the caller's own usage. */
export function usageRoutes(app: OpenAPIHono<AppEnv>, service: AgentService, clock: Clock): void {
  app.openapi(getUsage, async (c) => {
    const query = validateUsageQuery(c.req.query());
    if (!query.successful) return sendResult(c, query);
    const range = UsageReports.rangeOf(query.result, clock.now());
    return sendResult(c, ok(await service.usage(c.get("principal"), range, query.result.groupBy)));
  });
}
