import { spawnSync } from "node:child_process";
import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { MAX_LOG_LINE_BYTES } from "../src/logging/bounded-line.js";
import { batchedLines, jsonLogger } from "../src/logging/logger.js";

describe("the log", () => {
  it("writes the lines of one event-loop turn together, in order, by the end of that turn", async () => {
    const writes: string[] = [];
    const logger = jsonLogger(batchedLines((text) => writes.push(text)));
    logger.log("info", "first", { requestId: "r1" });
    logger.log("error", "second");
    expect(writes).toStrictEqual([]);
    await nextTurn();
    expect(writes).toHaveLength(1);
    expect(writes[0]?.split("\n").map((line) => (line ? JSON.parse(line) : line))).toMatchObject([
      { level: "info", message: "first", requestId: "r1" },
      { level: "error", message: "second" },
      "",
    ]);
    logger.log("info", "third");
    await nextTurn();
    expect(writes).toHaveLength(2);
    expect(JSON.parse(writes[1] ?? "")).toMatchObject({ message: "third" });
  });

  it("writes a line of at most 8 KiB whatever it is given, marked truncated and keeping what finds the request", () => {
    const lines: string[] = [];
    const logger = jsonLogger((line) => lines.push(line));
    const field = (index: number) => ({
      path: `k${index}${"\u0001".repeat(300)}`,
      message: "is not a field",
    });
    const errors = [
      { code: "VALIDATION_FAILED", details: { fields: Array.from({ length: 5000 }, (_, i) => field(i)) } },
    ];
    logger.log("info", "request", { requestId: "r1", status: 400, path: "/v1/agent/execute", errors });
    logger.log("info", "request", {
      requestId: "r2",
      status: 400,
      errors: [{ message: "x".repeat(MAX_LOG_LINE_BYTES) }],
    });
    logger.log(
      "error",
      "\u0001".repeat(100_000),
      Object.fromEntries([...Array(2000)].map((_, i) => [`\u0001${i}`, "\u0001".repeat(99)])),
    );
    logger.log("info", "small", { requestId: "r3" });
    const sizes = lines.map((line) => Buffer.byteLength(line));
    for (const size of sizes) expect(size).toBeLessThanOrEqual(MAX_LOG_LINE_BYTES + 1);
    const [first, second, third, fourth] = lines.map((line) => JSON.parse(line));
    expect(first).toMatchObject({
      level: "info",
      message: "request",
      requestId: "r1",
      status: 400,
      truncated: true,
    });
    expect(second).toMatchObject({
      requestId: "r2",
      truncated: true,
      errors: [{ message: expect.stringMatching(/^x{256}…$/) }],
    });
    expect(third).toMatchObject({ level: "error", truncated: true });
    expect(fourth).toEqual({ time: expect.any(String), level: "info", message: "small", requestId: "r3" });
  });

  it("writes the lines still pending when the process exits", () => {
    const script = [
      'import { jsonLogger } from "./src/logging/logger.ts";',
      'jsonLogger().log("error", "last words");',
      "process.exit(3);",
    ].join("\n");
    const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: new URL("..", import.meta.url),
      encoding: "utf8",
    });
    expect(child.status).toBe(3);
    expect(JSON.parse(child.stdout)).toMatchObject({ level: "error", message: "last words" });
  });
});
