import { OpenAIEmbedder } from "@aptix/llm-openai";
import { hashedEmbedding, type ScriptedOpenAI, startScriptedOpenAI } from "@aptix/testing-llm-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let server: ScriptedOpenAI;
beforeAll(async () => {
  server = await startScriptedOpenAI();
});
afterAll(async () => {
  await server.close();
});

const cosine = (a: number[], b: number[]) =>
  a.reduce((sum, value, index) => sum + value * (b[index] ?? 0), 0);

describe("OpenAIEmbedder (client.embeddings.create)", () => {
  it("embeds a batch in one request and answers the vectors in input order, with the tokens billed", async () => {
    const embedder = new OpenAIEmbedder({ apiKey: "test", baseURL: server.baseUrl, maxRetries: 0 });
    const texts = ["invoice total of the lines", "the invoice lines", "ship a parcel"];
    const { vectors, inputTokens } = await embedder.embed({ model: "text-embedding-3-small", texts });
    // The scripted server bills a token per word: 5, 3 and 3.
    expect(inputTokens).toBe(11);
    expect(vectors).toEqual(texts.map((text) => hashedEmbedding(text)));
    const [request] = server.embeddingRequests();
    expect(request?.body).toEqual({
      model: "text-embedding-3-small",
      input: texts,
      encoding_format: "float",
    });
    // The scripted model puts texts that share words near each other.
    const [total, lines, parcel] = vectors as [number[], number[], number[]];
    expect(cosine(total, lines)).toBeGreaterThan(cosine(total, parcel));
  });

  it("throws with the provider's message when OpenAI refuses the request", async () => {
    const embedder = new OpenAIEmbedder({ apiKey: "test", baseURL: server.baseUrl, maxRetries: 0 });
    await expect(embedder.embed({ model: "text-embedding-3-small", texts: [] })).rejects.toThrow(/input/);
  });

  it("throws naming OPENAI_API_KEY when no key is configured", async () => {
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      const embedder = new OpenAIEmbedder({ baseURL: server.baseUrl });
      await expect(embedder.embed({ model: "m", texts: ["a"] })).rejects.toThrow(
        "OPENAI_API_KEY is not set: this service cannot call OpenAI.",
      );
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
  });
});
