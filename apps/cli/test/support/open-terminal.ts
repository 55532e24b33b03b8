import { stripVTControlCharacters } from "node:util";
import * as pty from "node-pty";
import { APTIX_BIN } from "./aptix-process.js";
import { API_KEY } from "./aptix-server.js";

/** A real pseudo-terminal (node-pty) running `aptix <args> --url <url>`, with what it has shown so far. */
export function openTerminal(url: string, args: string[], cwd: string) {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env))
    if (value !== undefined && name !== "NO_COLOR") env[name] = value;
  const terminal = pty.spawn(process.execPath, [APTIX_BIN, ...args, "--url", url], {
    cwd,
    cols: 120,
    rows: 40,
    env: { ...env, TERM: "xterm-256color", APTIX_API_KEY: API_KEY },
  });
  let screen = "";
  terminal.onData((data) => {
    screen += data;
  });
  const exited = new Promise<number>((resolve) => terminal.onExit(({ exitCode }) => resolve(exitCode)));
  return {
    type: (text: string) => terminal.write(text),
    raw: () => screen,
    text: () => stripVTControlCharacters(screen),
    exited,
    /** Waits until the terminal shows `text` (after `from` characters of it); fails with the screen if it never does. */
    async waitFor(text: string, from = 0) {
      for (let waited = 0; !stripVTControlCharacters(screen).slice(from).includes(text); waited += 20) {
        if (waited > 30_000)
          throw new Error(
            `the terminal never showed ${JSON.stringify(text)}:\n${stripVTControlCharacters(screen)}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    kill: () => terminal.kill(),
  };
}
