import { z } from "zod";
import { FIELD_LENGTH_LIMITS } from "../limits.js";
import { queryValidator } from "../validation/query-validator.js";

/** The longest range `GET /v1/usage` sums over, in days, both ends included. */
const USAGE_MAX_DAYS = 366;

/** The most session buckets one page of `groupBy=session` holds, and how many when the request names no `limit`. */
const USAGE_SESSION_PAGE_LIMITS = { max: 500, default: 100 } as const;

/** A session page's cursor: `after:` and the last key of the page before ("" for the calls outside a session). */
const USAGE_CURSOR = new RegExp(`^after:[A-Za-z0-9._:-]{0,${FIELD_LENGTH_LIMITS.maxIdChars}}$`);

const DAY_MS = 86_400_000;
const isoDate = z.iso.date({ message: "must be an ISO 8601 date (YYYY-MM-DD)" });

/**
 * The query of `GET /v1/usage`, as strings from a URL: `from` and `to` are UTC dates, both included, at most 366
 * days apart, given together or not at all (then the current UTC month). `groupBy` is `day` (the default),
 * `model` or `session`; the session grouping is paged (`limit` buckets after the `cursor` session), the others
 * take no page.
 */
export const UsageQuerySchema = z
  .strictObject({
    from: isoDate.optional(),
    to: isoDate.optional(),
    groupBy: z.enum(["day", "model", "session"]).default("day"),
    limit: z
      .string()
      .regex(/^\d{1,3}$/, `must be a whole number from 1 to ${USAGE_SESSION_PAGE_LIMITS.max}`)
      .transform(Number)
      .pipe(z.int().min(1).max(USAGE_SESSION_PAGE_LIMITS.max))
      .optional(),
    /** A `nextCursor` answered: the last session of the page before. */
    cursor: z
      .string()
      .regex(USAGE_CURSOR, "must be a nextCursor this service answered (`after:` and a session id)")
      .optional(),
  })
  .superRefine((query, context) => {
    for (const field of ["limit", "cursor"] as const) {
      if (query[field] !== undefined && query.groupBy !== "session") {
        context.addIssue({ code: "custom", path: [field], message: "is only taken with groupBy=session" });
      }
    }
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

/**
 * `GET /v1/usage`: the caller's usage in the range, by group (oldest day, or name, first), and its total (the
 * whole range's, every page of sessions included).
 */
export const UsageReportSchema = z.strictObject({
  buckets: z.array(
    z.strictObject({
      /**
       * The UTC date (`YYYY-MM-DD`), the model, or the session id the bucket sums ("" for the calls outside any
       * session: embedding pushed documents).
       */
      key: z.string(),
      ...usageTotal,
    }),
  ),
  /** Every bucket of the range added up. */
  total: z.strictObject(usageTotal),
  /** `groupBy=session` only: pass as `cursor` for the next page of sessions; absent on the last one. */
  nextCursor: z.string().optional(),
});

export type SessionUsage = z.output<typeof SessionUsageSchema>;
export type UsageReport = z.output<typeof UsageReportSchema>;
