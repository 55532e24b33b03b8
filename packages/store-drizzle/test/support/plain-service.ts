import { AgentCatalog, AgentService, type AgentServiceOptions, type LlmProvider } from "@aptix/core";
import type { AptixStore } from "../../src/index.js";

/**
 * Core's AgentService on `store`, with one conversation context served by `provider` and one mode without
 * tools: every turn a plain one unless the provider asks for a tool.
 */
export function plainService(
  store: AptixStore,
  provider: LlmProvider,
  options: Pick<AgentServiceOptions, "eventFlushMs" | "followPollMs"> = {},
): AgentService {
  const catalog = AgentCatalog.create(
    {
      conversationContexts: [
        { id: "default", bootPrompt: "You are Aptix.", model: "gpt-test", provider: provider.id },
      ],
      modes: [
        {
          id: "general",
          displayName: "General",
          instructions: "Help.",
          welcomeMessage: "Hi.",
          tools: [],
          toolChoice: null,
        },
      ],
      clientTools: [],
    },
    [],
  );
  if (!catalog.successful) throw new Error(catalog.errors[0].message);
  return new AgentService({
    catalog: catalog.result,
    providers: [provider],
    store: store.sessions,
    files: store.files,
    events: store.events,
    ...options,
  });
}
