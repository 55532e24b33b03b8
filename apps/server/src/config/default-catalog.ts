import type { CatalogConfig } from "./catalog-config-schema.js";

/** What the service runs with when `APTIX_CONFIG` is unset: one general mode and the tools an IDE has. */
export const DEFAULT_CATALOG: CatalogConfig = {
  conversationContexts: [
    {
      id: "default",
      bootPrompt:
        "You are Aptix, a coding agent working inside the user's IDE. Read before you change, keep changes small " +
        "and explain them. Use read_file to look at workspace files and apply_patch to change them; the IDE runs " +
        "those tools and returns their results.",
      model: "gpt-5.1",
      provider: "openai",
      defaultMode: "general",
    },
  ],
  modes: [
    {
      id: "general",
      displayName: "General",
      tools: ["read_file", "apply_patch"],
      toolChoice: null,
      instructions: "Answer questions about the workspace and make the changes the user asks for.",
      welcomeMessage: "Back in general mode.",
    },
  ],
  clientTools: [
    {
      name: "read_file",
      description: "Read a file of the workspace open in the IDE.",
      parameters: {
        type: "object",
        properties: { path: { type: "string", description: "Path relative to the workspace root." } },
        required: ["path"],
        additionalProperties: false,
      },
      strict: true,
    },
    {
      name: "apply_patch",
      description: "Apply a unified diff to files of the workspace open in the IDE.",
      parameters: {
        type: "object",
        properties: {
          patch: { type: "string", description: "A unified diff, paths relative to the workspace root." },
        },
        required: ["patch"],
        additionalProperties: false,
      },
      strict: true,
    },
  ],
};
