import { OpenAIResponsesProvider } from "@aptix/llm-openai";
import { type RunningServer, readServerEnv, silentLogger, startServer } from "@aptix/server";
import { type ScriptedOpenAI, startScriptedOpenAI } from "@aptix/testing-llm-servers";

export const API_KEY = "cli-e2e-key-0123456789";

export interface AptixServer {
  server: RunningServer;
  /** The scripted model behind the server's OpenAI provider. */
  openai: ScriptedOpenAI;
  /** The `function_call_output` items of every request the model got, by call id. */
  toolOutputs(): Map<string, string>;
  /** How many documents the service's index holds for the workspace (`GET /v1/workspaces/:id`). */
  documentsIn(workspaceId: string): Promise<number>;
  /** The text parts of the user message of the model's last request that holds one. */
  lastUserParts(): string[];
  close(): Promise<void>;
}

/**
 * The real server as `main.ts` starts it (`startServer`: the built-in default catalog, PGlite in memory, the
 * workspace index), whose OpenAI provider talks to a scripted OpenAI server on loopback, with one API key.
 * `env` adds to its environment (`APTIX_CONFIG`, say).
 */
export async function startAptixServer(env: Record<string, string> = {}): Promise<AptixServer> {
  const openai = await startScriptedOpenAI();
  const serverEnv = readServerEnv({
    PORT: "0",
    DATABASE_URL: "memory://",
    APTIX_API_KEYS: `cli:${API_KEY}`,
    APTIX_SHUTDOWN_TIMEOUT_MS: "0",
    ...env,
  });
  const provider = new OpenAIResponsesProvider({ apiKey: "test", baseURL: openai.baseUrl, maxRetries: 0 });
  const server = await startServer(serverEnv, silentLogger, [provider]);
  const inputs = () =>
    openai
      .responseRequests()
      .flatMap(
        (request) => ((request.body as { input?: unknown }).input ?? []) as Array<Record<string, unknown>>,
      );
  return {
    server,
    openai,
    toolOutputs: () =>
      new Map(
        inputs()
          .filter((item) => item.type === "function_call_output")
          .map((item) => [String(item.call_id), String(item.output)]),
      ),
    documentsIn: async (workspaceId) => {
      const response = await fetch(`${server.url}/v1/workspaces/${workspaceId}`, {
        headers: { authorization: `Bearer ${API_KEY}` },
      });
      return ((await response.json()) as { result: { documents: number } }).result.documents;
    },
    lastUserParts: () => {
      const user = inputs()
        .filter((item) => item.role === "user")
        .at(-1);
      const content = (user?.content ?? []) as Array<{ type: string; text?: string }>;
      return content.flatMap((part) =>
        part.type === "input_text" && part.text !== undefined ? [part.text] : [],
      );
    },
    async close() {
      await server.close();
      await openai.close();
    },
  };
}
