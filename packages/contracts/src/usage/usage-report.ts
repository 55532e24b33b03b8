import { z } from "zod";
import { queryValidator } from "../validation/query-validator.js";

/** The longest range `GET /v1/usage` sums over, in days, both ends included. */
const USAGE_MAX_DAYS = 366;

const DAY_MS = 86_400_000;
const isoDate = z.iso.date({ message: "must be an ISO 8601 date (YYYY-MM-DD)" });

/**
 * The query of `GET /v1/usage`, as strings from a URL: `from` and `to` are UTC dates, both included, at most 366
 * days apart, given together or not at all (then the current UTC month). `groupBy` is `day` (the default),
 * `model` or `session`.
 */
export const UsageQuerySchema = z
  .strictObject({
    from: isoDate.optional(),
    to: isoDate.optional(),
    groupBy: z.enum(["day", "model", "session"]).default("day"),
  })
  .superRefine((query, context) => {
    if (query.from === undefined && query.to !== undefined) {
      context.addIssue({ code: "custom", path: ["from"], message: "is required with `to`" });
    }
    if (query.from !== undefined && query.to === undefined) {
      context.addIssue({ code: "custom", path: ["to"], message: "is required with `from`" });
    }
    // A date refused on its own is named once, not again as a bad range.
    if (!isDay(query.from) || !isDay(query.to)) return;
    const days = (Date.parse(query.to) - Date.parse(query.from)) / DAY_MS + 1;
    if (days < 1) context.addIssue({ code: "custom", path: ["to"], message: "must not be before `from`" });
    if (days > USAGE_MAX_DAYS) {
      context.addIssue({
        code: "custom",
        path: ["to"],
        message: `must be at most ${USAGE_MAX_DAYS} days from \`from\`, both included`,
      });
    }
  });

/** Whether `text` is a real UTC day as `YYYY-MM-DD` (`2026-02-30` is not). */
function isDay(text: string | undefined): text is string {
  const time = text === undefined ? Number.NaN : Date.parse(text);
  return !Number.isNaN(time) && new Date(time).toISOString().slice(0, 10) === text;
}

export type UsageQuery = z.output<typeof UsageQuerySchema>;
export const validateUsageQuery = queryValidator(UsageQuerySchema);

const tokens = z.int().min(0);
/** USD by the price table; null when a call of it used a model the table does not price (never a guess). */
const costUsd = z.number().min(0).nullable();

/** The usage of a session (its view's `usage`): every LLM call of every turn, compaction summaries included. */
export const SessionUsageSchema = z.strictObject({
  inputTokens: tokens,
  /** The part of `inputTokens` the provider read from its prompt cache. */
  cachedInputTokens: tokens,
  outputTokens: tokens,
  /** The part of `outputTokens` spent on hidden reasoning. */
  reasoningTokens: tokens,
  llmCalls: z.int().min(0),
  costUsd,
});

const usageTotal = {
  inputTokens: tokens,
  cachedInputTokens: tokens,
  outputTokens: tokens,
  llmCalls: z.int().min(0),
  costUsd,
};

/** `GET /v1/usage`: the caller's usage in the range, by group (oldest day, or name, first), and its total. */
export const UsageReportSchema = z.strictObject({
  buckets: z.array(
    z.strictObject({
      /** The UTC date (`YYYY-MM-DD`), the model, or the session id the bucket sums. */
      key: z.string(),
      ...usageTotal,
    }),
  ),
  /** The buckets added up. */
  total: z.strictObject(usageTotal),
});

export type SessionUsage = z.output<typeof SessionUsageSchema>;
export type UsageReport = z.output<typeof UsageReportSchema>;
