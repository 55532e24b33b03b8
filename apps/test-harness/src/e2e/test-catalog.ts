import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const BOOT_PROMPT = "You are Aptix, under end-to-end test.";
export const GENERAL_INSTRUCTIONS = "Help with anything in the workspace.";
export const REVIEW_INSTRUCTIONS = "Review the code you are shown and submit a review.";
export const REVIEW_WELCOME = "Switched to code review: show me what to look at.";
export const TEST_MODEL = "gpt-e2e";
export const ANTHROPIC_TEST_MODEL = "claude-e2e";

/**
 * The small `APTIX_CONFIG` catalog the end-to-end scenarios run with (docs/configuration.md): mode `general` offers
 * `read_file`, mode `review` offers `read_file` and `submit_review` and has a welcome message. Both tools are
 * client tools (the server has no executor for them); `agent_change_mode` is always offered on top.
 */
export const E2E_CATALOG = {
  conversationContexts: [
    { id: "default", bootPrompt: BOOT_PROMPT, model: TEST_MODEL, provider: "openai", defaultMode: "general" },
  ],
  modes: [
    {
      id: "general",
      displayName: "General",
      tools: ["read_file"],
      toolChoice: null,
      instructions: GENERAL_INSTRUCTIONS,
    },
    {
      id: "review",
      displayName: "Code Review",
      tools: ["read_file", "submit_review"],
      toolChoice: null,
      instructions: REVIEW_INSTRUCTIONS,
      welcomeMessage: REVIEW_WELCOME,
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
      name: "submit_review",
      description: "Submit the finished review to the IDE.",
      parameters: {
        type: "object",
        properties: { summary: { type: "string" }, approve: { type: "boolean" } },
        required: ["summary", "approve"],
        additionalProperties: false,
      },
      strict: true,
    },
  ],
};

/** E2E_CATALOG whose general mode also offers the built-in `create_file` server tool. */
export const CREATE_FILE_CATALOG = {
  ...E2E_CATALOG,
  modes: [{ ...E2E_CATALOG.modes[0], tools: ["read_file", "create_file"] }, ...E2E_CATALOG.modes.slice(1)],
  serverTools: [{ name: "create_file", builtin: "create_file" }],
};

/** The conversation contexts of `PROVIDERS_CATALOG`, one per provider. */
export const PROVIDER_CONTEXTS = { openai: "openai-e2e", anthropic: "anthropic-e2e" } as const;

/**
 * The e2e catalog with two conversation contexts, one per provider (`openai-e2e` first, so the default), and
 * the same modes and client tools: a request picks its provider with `conversationContextId`.
 */
export const PROVIDERS_CATALOG = {
  ...E2E_CATALOG,
  conversationContexts: [
    {
      id: PROVIDER_CONTEXTS.openai,
      bootPrompt: BOOT_PROMPT,
      model: TEST_MODEL,
      provider: "openai",
      defaultMode: "general",
    },
    {
      id: PROVIDER_CONTEXTS.anthropic,
      bootPrompt: BOOT_PROMPT,
      model: ANTHROPIC_TEST_MODEL,
      provider: "anthropic",
      defaultMode: "general",
    },
  ],
};

const written = new Map<unknown, Promise<string>>();

/** Writes a catalog to a temporary file (once per catalog and process) and returns its path, for `APTIX_CONFIG`. */
export function writeCatalog(catalog: unknown): Promise<string> {
  let path = written.get(catalog);
  if (path === undefined) {
    path = (async () => {
      const directory = await mkdtemp(join(tmpdir(), "aptix-e2e-config-"));
      const file = join(directory, "aptix.config.json");
      await writeFile(file, JSON.stringify(catalog, null, 2));
      return file;
    })();
    written.set(catalog, path);
  }
  return path;
}

/** Writes `E2E_CATALOG` to a temporary file (once per process) and returns its path, for `APTIX_CONFIG`. */
export function writeE2ECatalog(): Promise<string> {
  return writeCatalog(E2E_CATALOG);
}
