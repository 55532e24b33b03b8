import { ok, UsageQuerySchema, validateUsageQuery } from "@aptix/contracts";
import { type AgentService, type Clock, UsageReports } from "@aptix/core";
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../app-env.js";
import { queryParameters } from "../openapi/parameters.js";
import { FAILURES, OWNER_ONLY, success } from "../openapi/responses.js";
import { rateLimited } from "../rate-limited.js";
import { sendResult } from "../send-result.js";
import { MAX_USAGE_READS_PER_PRINCIPAL, UsageReadSlots } from "./usage-read-slots.js";

/** When a caller refused for running too many usage reads may try again: a read takes well under a second. */
const USAGE_READ_RETRY_MS = 1_000;

const getUsage = createRoute({
  method: "get",
  path: "/v1/usage",
  operationId: "getUsage",
  tags: ["Usage"],
  summary: "Get the caller's usage and cost",
  description:
    "The caller's LLM usage (every call, compaction summaries included) and its cost in USD by the price table, " +
    "summed by UTC day, model or session, with the total of the whole range. Embedding requests (workspace " +
    'knowledge) are calls too; those of pushed documents are in the session bucket "". A cost is null when a ' +
    "call used a model the price table does not price. `from` and `to` come together; without them, the current " +
    "UTC month. The session grouping is paged: `limit` sessions a page, the next after `cursor` (the page's " +
    `\`nextCursor\`). A caller has at most ${MAX_USAGE_READS_PER_PRINCIPAL} usage reads running at once on an ` +
    "instance (429 RATE_LIMITED beyond, with Retry-After).",
  security: OWNER_ONLY,
  parameters: queryParameters(UsageQuerySchema, {
    from: { description: "The first UTC date counted (YYYY-MM-DD).", example: "2026-03-01" },
    to: { description: "The last UTC date counted, at most 366 days after `from`.", example: "2026-03-31" },
    groupBy: { description: "`day` (the default), `model` or `session`.", example: "model" },
    limit: {
      description: "`groupBy=session` only: the most session buckets in a page, 1 to 500 (default 100).",
      example: "100",
    },
    cursor: {
      description: "`groupBy=session` only: the `nextCursor` of the page before.",
      example: "after:s-0193",
    },
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

/** `GET /v1/usage`: only ever the caller's own usage, at most two of the caller's reads at once. */
export function usageRoutes(app: OpenAPIHono<AppEnv>, service: AgentService, clock: Clock): void {
  const slots = new UsageReadSlots();
  app.openapi(getUsage, async (c) => {
    const query = validateUsageQuery(c.req.query());
    if (!query.successful) return sendResult(c, query);
    const range = UsageReports.rangeOf(query.result, clock.now());
    const principal = c.get("principal");
    const report = await slots.run(principal, () => service.usage(principal, range, query.result));
    if (report === undefined) {
      return sendResult(
        c,
        rateLimited(`At most ${MAX_USAGE_READS_PER_PRINCIPAL} usage reads run at once`, USAGE_READ_RETRY_MS),
      );
    }
    return sendResult(c, ok(report.value));
  });
}
