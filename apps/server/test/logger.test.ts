import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { stripVTControlCharacters } from "node:util";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../src/config/config-error.js";
import { readServerEnv } from "../src/config/server-env.js";
import { MAX_LOG_LINE_BYTES } from "../src/logging/bounded-line.js";
import { createLogger } from "../src/logging/create-logger.js";
import { capturedLog } from "./captured-log.js";

describe("the log", () => {
  it("writes JSON lines with time, level and message, and the fields given", () => {
    const { logger, lines } = capturedLog();
    logger.info({ requestId: "r1", count: 2 }, "first");
    logger.error("second");
    expect(lines).toEqual([
      {
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        level: "info",
        message: "first",
        requestId: "r1",
        count: 2,
      },
      { time: expect.any(String), level: "error", message: "second" },
    ]);
  });

  it("writes nothing below LOG_LEVEL: at warn, no info or debug line", () => {
    const { logger, lines } = capturedLog("warn");
    logger.debug("debug");
    logger.info("info");
    logger.warn("warn");
    logger.error("error");
    expect(lines.map((line) => line.level)).toEqual(["warn", "error"]);
  });

  it("takes LOG_LEVEL from the environment, info by default, and names it when it is not a level", () => {
    expect(readServerEnv({}).LOG_LEVEL).toBe("info");
    expect(readServerEnv({ LOG_LEVEL: "debug" }).LOG_LEVEL).toBe("debug");
    const error = (() => {
      try {
        readServerEnv({ LOG_LEVEL: "verbose" });
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).lines).toEqual([
      'Invalid environment: LOG_LEVEL="verbose": must be one of trace, debug, info, warn, error, fatal, silent',
    ]);
  });

  it("redacts secrets by path: MCP env and headers, Authorization headers, API and provider keys", () => {
    const { logger, lines } = capturedLog();
    const secret = "sk-secret-0123456789";
    logger.info(
      {
        mcpServer: { name: "github", env: { GITHUB_TOKEN: secret }, headers: { authorization: secret } },
        mcpServers: [{ name: "docs", env: { TOKEN: secret }, headers: { "x-api-key": secret } }],
        headers: { authorization: `Bearer ${secret}` },
        authorization: `Bearer ${secret}`,
        provider: { apiKey: secret },
        env: { OPENAI_API_KEY: secret },
        ANTHROPIC_API_KEY: secret,
        APTIX_API_KEYS: `alice:${secret}`,
      },
      "configured",
    );
    logger.child({ headers: { authorization: secret } }).info("a child's bindings too");
    const text = JSON.stringify(lines);
    expect(text).not.toContain(secret);
    expect(lines[0]).toMatchObject({
      mcpServer: { name: "github", env: "[redacted]", headers: "[redacted]" },
      mcpServers: [{ name: "docs", env: "[redacted]", headers: "[redacted]" }],
      authorization: "[redacted]",
      provider: { apiKey: "[redacted]" },
    });
  });

  it("writes a line of at most 8 KiB whatever it is given, marked truncated and keeping what finds the request", () => {
    const lines: Array<Record<string, unknown>> = [];
    const field = (index: number) => ({
      path: `k${index}${"\u0001".repeat(300)}`,
      message: "is not a field",
    });
    const errors = [
      { code: "VALIDATION_FAILED", details: { fields: Array.from({ length: 5000 }, (_, i) => field(i)) } },
    ];
    const sizes: number[] = [];
    const logger = createLogger({
      destination: {
        write: (line) => {
          sizes.push(Buffer.byteLength(line));
          lines.push(JSON.parse(line));
        },
      },
    });
    logger.info({ requestId: "r1", status: 400, path: "/v1/agent/execute", errors }, "request");
    logger.info(
      { requestId: "r2", status: 400, errors: [{ message: "x".repeat(MAX_LOG_LINE_BYTES) }] },
      "request",
    );
    logger.error(
      Object.fromEntries([...Array(2000)].map((_, i) => [`\u0001${i}`, "\u0001".repeat(99)])),
      "\u0001".repeat(100_000),
    );
    logger.info({ requestId: "r3" }, "small");
    for (const size of sizes) expect(size).toBeLessThanOrEqual(MAX_LOG_LINE_BYTES + 1);
    const [first, second, third, fourth] = lines;
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
      'import { createLogger } from "./src/logging/create-logger.ts";',
      'createLogger().error("last words");',
      "process.exit(3);",
    ].join("\n");
    const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: new URL("..", import.meta.url),
      encoding: "utf8",
    });
    expect(child.status).toBe(3);
    expect(JSON.parse(child.stdout)).toMatchObject({ level: "error", message: "last words" });
  });

  // `script` (util-linux) runs the child on a pseudo-terminal: stdout is a terminal there, as in a shell.
  it.skipIf(!existsSync("/usr/bin/script"))(
    "pretty-prints on a terminal, and writes JSON lines when stdout is not one",
    () => {
      const entry = fileURLToPath(new URL("../src/logging/stdout-logger.ts", import.meta.url));
      const file = join(mkdtempSync(join(tmpdir(), "aptix-log-")), "log.mts");
      writeFileSync(
        file,
        `import { stdoutLogger } from ${JSON.stringify(entry)};\n` +
          `(await stdoutLogger("info")).logger.info({ port: 8787 }, "listening");\n`,
      );
      const command = `${process.execPath} --import tsx ${file}`;
      const options = { cwd: fileURLToPath(new URL("..", import.meta.url)), encoding: "utf8" as const };
      const terminal = spawnSync("/usr/bin/script", ["-qec", command, "/dev/null"], options);
      expect(terminal.status).toBe(0);
      const shown = stripVTControlCharacters(terminal.stdout);
      expect(shown).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: listening\r?\n\s+port: 8787/);
      const piped = spawnSync(process.execPath, ["--import", "tsx", file], options);
      expect(JSON.parse(piped.stdout)).toMatchObject({ level: "info", message: "listening", port: 8787 });
    },
  );
});
