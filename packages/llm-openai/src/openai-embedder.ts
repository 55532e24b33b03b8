import type { Embedded, Embedder } from "@aptix/core";
import type { LazySdkClient } from "@aptix/llm-transport";
import OpenAI from "openai";
import { lazyOpenAIClient, type OpenAIClientOptions } from "./openai-client.js";
import { providerError } from "./provider-error.js";

export type OpenAIEmbedderOptions = OpenAIClientOptions;

/**
 * Core's `Embedder` over `client.embeddings.create` (docs/knowledge.md): one request per batch it is given,
 * vectors in input order, with the input tokens OpenAI billed. The client is made on first use, like the
 * Responses provider's; a failure throws with the same message PROVIDER_ERROR would carry.
 */
export class OpenAIEmbedder implements Embedder {
  readonly id = "openai";
  readonly #client: LazySdkClient<OpenAI>;

  constructor(options: OpenAIEmbedderOptions = {}) {
    this.#client = lazyOpenAIClient("openai", options);
  }

  async embed({ model, texts }: { model: string; texts: readonly string[] }): Promise<Embedded> {
    const client = this.#client.get();
    if (!(client instanceof OpenAI)) throw new Error(client.errors[0].message);
    let response: OpenAI.CreateEmbeddingResponse;
    try {
      response = await client.embeddings.create({ model, input: [...texts], encoding_format: "float" });
    } catch (error) {
      throw new Error(providerError(error).errors[0].message, { cause: error });
    }
    // OpenAI numbers each vector by its input; order by that rather than trust the list's order.
    return {
      vectors: [...response.data].sort((a, b) => a.index - b.index).map((item) => item.embedding),
      // Some OpenAI-compatible servers leave `usage` out: the vectors still count, their tokens as none.
      inputTokens: response.usage?.prompt_tokens ?? 0,
    };
  }
}
