#!/usr/bin/env node
import { runCli } from "./run-cli.js";

// A reader that goes away (`aptix session s | head`) ends the CLI quietly, as it ends other Unix tools: Node
// ignores SIGPIPE, so a write to the closed pipe would otherwise crash with an unhandled EPIPE.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    process.exit(0);
  });
}

process.exitCode = await runCli(
  process.argv.slice(2),
  { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env },
  process.cwd(),
);
