import { describe, expect, it } from "vitest";
import { validateUsageQuery } from "../src/index.js";

/** The fields a refused query names, by path. */
function refused(query: Record<string, string>): string[] {
  const result = validateUsageQuery(query);
  if (result.successful) throw new Error("expected a refusal");
  const fields = result.errors[0].details?.fields as Array<{ path: string }>;
  return fields.map((field) => field.path);
}

describe("GET /v1/usage query", () => {
  it("defaults groupBy to day and leaves the range to the service", () => {
    expect(validateUsageQuery({})).toEqual({
      successful: true,
      result: { groupBy: "day" },
      errors: [],
      warnings: [],
    });
  });

  it("accepts a range of 366 days, both ends included", () => {
    const result = validateUsageQuery({ from: "2028-01-01", to: "2028-12-31", groupBy: "session" });
    expect(result.successful && result.result).toEqual({
      from: "2028-01-01",
      to: "2028-12-31",
      groupBy: "session",
    });
  });

  it("names the field for a bad from, to or groupBy, and for a range that is backwards or too long", () => {
    expect(refused({ from: "yesterday", to: "2026-03-01" })).toEqual(["from"]);
    expect(refused({ from: "2026-02-01", to: "2026-02-30" })).toEqual(["to"]);
    expect(refused({ from: "2026-02-30", to: "2026-03-01" })).toEqual(["from"]);
    expect(refused({ from: "2026-02-01" })).toEqual(["to"]);
    expect(refused({ to: "2026-02-01" })).toEqual(["from"]);
    expect(refused({ groupBy: "week" })).toEqual(["groupBy"]);
    expect(refused({ from: "2026-03-02", to: "2026-03-01" })).toEqual(["to"]);
    expect(refused({ from: "2026-01-01", to: "2027-01-02" })).toEqual(["to"]);
    expect(refused({ tz: "UTC" })).toEqual(["tz"]);
  });

  it("pages the session grouping by limit and cursor, and names either with another grouping", () => {
    const result = validateUsageQuery({ groupBy: "session", limit: "2", cursor: "after:s-1" });
    expect(result.successful && result.result).toEqual({ groupBy: "session", limit: 2, cursor: "after:s-1" });
    expect(validateUsageQuery({ groupBy: "session", cursor: "after:" }).successful).toBe(true);
    expect(refused({ groupBy: "session", limit: "0" })).toEqual(["limit"]);
    expect(refused({ groupBy: "session", limit: "501" })).toEqual(["limit"]);
    expect(refused({ groupBy: "session", limit: "ten" })).toEqual(["limit"]);
    expect(refused({ groupBy: "session", cursor: "after:a b" })).toEqual(["cursor"]);
    expect(refused({ groupBy: "session", cursor: "s-1" })).toEqual(["cursor"]);
    expect(refused({ groupBy: "session", cursor: "" })).toEqual(["cursor"]);
    expect(refused({ groupBy: "day", limit: "2" })).toEqual(["limit"]);
    expect(refused({ cursor: "after:s-1" })).toEqual(["cursor"]);
  });
});
