import {
  AgentCatalog,
  AgentService,
  type LlmProvider,
  type ServerTool,
  type ToolDefinition,
} from "@aptix/core";
import type { AgentServiceOptions } from "@aptix/core/testing";
import type { AptixStore } from "../../src/index.js";

/**
 * Core's AgentService on `store`, with one conversation context served by `provider` and one mode whose tools
 * are the server `tools` and the `clientTools` (none by default): every turn a plain one unless the provider
 * asks for a tool.
 */
export function plainService(
  store: AptixStore,
  provider: LlmProvider,
  {
    tools = [],
    clientTools = [],
    ...options
  }: Pick<AgentServiceOptions, "eventFlushMs" | "followPollMs" | "clock" | "maxRunningTurns"> & {
    tools?: readonly ServerTool[];
    clientTools?: readonly ToolDefinition[];
  } = {},
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
          tools: [...tools.map((tool) => tool.definition.name), ...clientTools.map((tool) => tool.name)],
          toolChoice: null,
        },
      ],
      clientTools: [...clientTools],
    },
    [...tools],
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
