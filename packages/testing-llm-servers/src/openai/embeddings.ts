import { createHash } from "node:crypto";

/** Dimensions of a scripted embedding when the request names none (text-embedding-3-small's). */
const DEFAULT_EMBEDDING_DIMENSIONS = 1536;

/**
 * A deterministic stand-in for an embedding model: a hashed bag of words. Each lower-case word (and each part
 * of a camelCase or snake_case identifier) adds 1 to the dimension its hash picks, and the vector is scaled to
 * length 1, so texts sharing words are near by cosine similarity and unrelated texts are nearly orthogonal.
 */
export function hashedEmbedding(text: string, dimensions = DEFAULT_EMBEDDING_DIMENSIONS): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  const words = (text.match(/[\p{L}\p{N}_]+/gu) ?? []).flatMap((word) =>
    word
      .split(/_|(?<=\p{Ll})(?=\p{Lu})/u)
      .filter((part) => part !== "")
      .map((part) => part.toLowerCase()),
  );
  for (const word of words) {
    const index = createHash("sha256").update(word).digest().readUInt32BE(0) % dimensions;
    vector[index] = (vector[index] ?? 0) + 1;
  }
  const norm = Math.hypot(...vector);
  return norm === 0 ? vector : vector.map((value) => value / norm);
}

/** A `POST /v1/embeddings` body the scripted server can answer, or why it cannot (OpenAI's 400 `param`). */
export function parseEmbeddingsRequest(
  body: Record<string, unknown>,
): { model: string; inputs: string[]; dimensions: number } | { param: string; message: string } {
  const { model, input, dimensions } = body;
  if (typeof model !== "string" || model === "")
    return { param: "model", message: "you must provide a model parameter" };
  const inputs = typeof input === "string" ? [input] : input;
  if (
    !Array.isArray(inputs) ||
    inputs.length === 0 ||
    !inputs.every((item) => typeof item === "string" && item !== "")
  ) {
    return {
      param: "input",
      message: "'input' must be a non-empty string or a non-empty array of non-empty strings",
    };
  }
  if (inputs.length > 2048) return { param: "input", message: "'input' must hold at most 2048 entries" };
  if (dimensions !== undefined && (!Number.isInteger(dimensions) || (dimensions as number) < 1)) {
    return { param: "dimensions", message: "'dimensions' must be a positive integer" };
  }
  return { model, inputs, dimensions: (dimensions as number | undefined) ?? DEFAULT_EMBEDDING_DIMENSIONS };
}
