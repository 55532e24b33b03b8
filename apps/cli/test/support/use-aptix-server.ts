import { afterAll, beforeAll } from "vitest";
import { type AptixServer, startAptixServer } from "./aptix-server.js";
import { removeWorkspaces } from "./workspace-dir.js";

/**
 * The server of a test file: started before its tests (with the environment `env` gives, once), closed after
 * them, and the workspaces the file made removed. Its fields are there from the first test on.
 */
export function useAptixServer(env: () => Promise<Record<string, string>> = async () => ({})): AptixServer {
  const aptix = {} as AptixServer;
  beforeAll(async () => {
    Object.assign(aptix, await startAptixServer(await env()));
  });
  afterAll(async () => {
    await aptix.close?.();
    await removeWorkspaces();
  });
  return aptix;
}
