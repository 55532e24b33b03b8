import type { AgentCatalog } from "@aptix/core";
import type { Logger } from "pino";

/** The variable each built-in provider adapter reads its API key from. */
const KEY_OF: Record<string, string> = { openai: "OPENAI_API_KEY", anthropic: "ANTHROPIC_API_KEY" };

/**
 * Says at start-up which providers the catalog's conversation contexts use that cannot be called yet, rather than
 * at the first turn: the built-in adapters start without their key and fail each call until it is set.
 */
export function warnUnsetProviderKeys(logger: Logger, catalog: AgentCatalog): void {
  const used = new Set(catalog.conversationContexts.map((context) => context.provider));
  for (const provider of used) {
    const variable = KEY_OF[provider];
    if (variable && !process.env[variable]) {
      logger.warn(
        `${variable} is not set: turns of ${provider} conversation contexts will fail with PROVIDER_ERROR until it is set.`,
      );
    }
  }
}
