import { defaultClientTools } from "@aptix/contracts";
import type { CatalogConfig } from "./catalog-config-schema.js";

/**
 * What the service runs with when `APTIX_CONFIG` is unset: one general mode offering the client tools of
 * `@aptix/contracts`' `defaultClientTools`, which the `aptix` terminal client runs (one definition for both).
 */
export const DEFAULT_CATALOG: CatalogConfig = {
  conversationContexts: [
    {
      id: "default",
      bootPrompt:
        "You are Aptix, a coding agent working in the user's workspace. Read before you change, keep changes small " +
        "and explain them. Use list_files, search_files and read_file to look at workspace files and apply_patch " +
        "to change them; the user's client runs those tools and returns their results.",
      model: "gpt-5.1",
      provider: "openai",
      defaultMode: "general",
    },
  ],
  modes: [
    {
      id: "general",
      displayName: "General",
      tools: defaultClientTools.map((tool) => tool.name),
      toolChoice: null,
      instructions: "Answer questions about the workspace and make the changes the user asks for.",
      welcomeMessage: "Back in general mode.",
    },
  ],
  clientTools: defaultClientTools.map((tool) => ({ ...tool })),
};
