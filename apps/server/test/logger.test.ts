import { spawnSync } from "node:child_process";
import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
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
