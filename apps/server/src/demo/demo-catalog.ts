import type { CatalogConfig } from "../config/catalog-config-schema.js";
import { DEFAULT_CATALOG } from "../config/default-catalog.js";
import { DEMO_PROVIDER_ID } from "./demo-provider.js";

/**
 * The built-in config of `pnpm demo`: the default one on the demo model, with the `create_file` server tool asking
 * the user first, and a small window (a few thousand tokens) so a short conversation already shows compaction.
 */
export const DEMO_CATALOG: CatalogConfig = {
  ...DEFAULT_CATALOG,
  conversationContexts: DEFAULT_CATALOG.conversationContexts.map((context) => ({
    ...context,
    model: "aptix-demo",
    provider: DEMO_PROVIDER_ID,
    contextWindowTokens: 4_000,
  })),
  modes: DEFAULT_CATALOG.modes.map((mode) => ({ ...mode, tools: [...mode.tools, "create_file"] })),
  serverTools: [{ name: "create_file", builtin: "create_file", approval: "always" }],
};
