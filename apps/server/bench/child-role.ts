import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

/**
 * Starts `script` again as a child in `role` (its first argument), with `env`, and answers the URL it prints:
 * a role listens on a free port and prints `{"url": …}` once.
 */
export async function startRole(
  script: string,
  role: string,
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [...process.execArgv, script, role], {
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`${role} exited (code ${code}) before listening`)));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once("line", (line) => {
      resolve((JSON.parse(line) as { url: string }).url);
    });
  });
  return { child, url };
}
