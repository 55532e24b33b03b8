import { afterAll, afterEach, beforeAll, expect } from "vitest";

/** What the helper drives on either scripted server. */
interface ScriptedServer {
  pendingSteps(): number;
  setContextWindow(tokens: number | undefined): void;
  reset(): void;
  close(): Promise<void>;
}

/**
 * One server for a test file: `assign` receives it once started; after each test it is cleared (no window, no
 * requests, no steps) before checking that the test left no step behind, so one failing test does not fail the
 * next; it is closed after all.
 */
export function scriptedServerPerFile<S extends ScriptedServer>(
  start: () => Promise<S>,
  assign: (server: S) => void,
): void {
  let server: S | undefined;
  beforeAll(async () => {
    server = await start();
    assign(server);
  });
  afterEach(() => {
    const pending = server?.pendingSteps();
    server?.setContextWindow(undefined);
    server?.reset();
    expect(pending).toBe(0);
  });
  afterAll(async () => {
    await server?.close();
  });
}
