import type { TimeRange } from "./usage-reports.js";

/** The UTC day `now` falls in: from its midnight to the next. */
export function utcDayOf(now: Date): TimeRange {
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  return { from, to: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)) };
}

/** The UTC month `now` falls in: from its first day to the next month's. */
export function utcMonthOf(now: Date): TimeRange {
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  return { from, to: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)) };
}
