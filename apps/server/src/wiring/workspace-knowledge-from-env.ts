import { randomIdGenerator, sha256ContentHashService, WorkspaceKnowledge } from "@aptix/core";
import { OpenAIEmbedder } from "@aptix/llm-openai";
import type { AptixStore } from "@aptix/store-drizzle";
import type { CatalogConfig } from "../config/catalog-config-schema.js";
import type { ServerEnv } from "../config/server-env.js";
import type { DocumentPreparationPool } from "../knowledge/document-preparation-pool.js";

/**
 * The principals' workspace indexes, embedding chunks with OpenAI when the catalog names an embeddings model (each
 * request's usage kept with the principal's other calls).
 */
export function workspaceKnowledgeFromEnv(
  env: ServerEnv,
  store: AptixStore,
  preparation: DocumentPreparationPool,
  embeddings: CatalogConfig["embeddings"],
): WorkspaceKnowledge {
  return new WorkspaceKnowledge({
    index: store.workspaceIndex,
    hashes: sha256ContentHashService,
    preparation,
    ids: randomIdGenerator,
    // Embedding requests spend too: kept as usage, so reports show them and budgets count them.
    usage: store.sessions.usage,
    quotaBytes: env.APTIX_QUOTA_WORKSPACE_BYTES,
    ...(embeddings
      ? {
          embeddings: {
            embedder: new OpenAIEmbedder({
              maxRetries: env.APTIX_OPENAI_MAX_RETRIES,
              timeoutMs: env.APTIX_OPENAI_TIMEOUT_MS,
            }),
            model: embeddings.model,
            ...(embeddings.batchSize ? { batchSize: embeddings.batchSize } : {}),
          },
        }
      : {}),
  });
}
