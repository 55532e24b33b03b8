import { OpenAIResponsesProvider } from "@aptix/llm-openai";
import { type RunningServer, readServerEnv, silentLogger, startServer } from "@aptix/server";
import { API_KEY, PRINCIPAL } from "./live-server.js";

/** Another principal and its key, to check that workspaces are scoped by principal. */
export const OTHER_API_KEY = "bob-client-key-0123456789";

/**
 * The server as `main.ts` wires it (`startServer`: PGlite in memory, the workspace index with it), with API keys
 * for `alice` and `bob`. Its provider points nowhere: these tests make no LLM call.
 */
export function startWiredServer(): Promise<RunningServer> {
  const env = readServerEnv({
    PORT: "0",
    DATABASE_URL: "memory://",
    APTIX_API_KEYS: `${PRINCIPAL}:${API_KEY},bob:${OTHER_API_KEY}`,
    APTIX_SHUTDOWN_TIMEOUT_MS: "0",
  });
  const provider = new OpenAIResponsesProvider({
    apiKey: "test",
    baseURL: "http://127.0.0.1:9/v1",
    maxRetries: 0,
  });
  return startServer(env, silentLogger, [provider]);
}
