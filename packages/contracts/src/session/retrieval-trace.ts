import { z } from "zod";

/**
 * Whether a user turn's message carries a `[CONTEXT]` block, and why not when it does not (docs/knowledge.md):
 * no workspace named or latched, a workspace the principal does not have, one with no chunks, no chunk matching,
 * or matches none of which fit `maxContextTokens`.
 */
export const RETRIEVAL_OUTCOMES = [
  "included",
  "no_workspace",
  "unknown_workspace",
  "empty_index",
  "no_match",
  "none_fit",
] as const;

const chunkLines = {
  /** The chunk's id in the workspace index (stable until its document changes). */
  chunkId: z.string(),
  path: z.string(),
  startLine: z.int().min(1),
  endLine: z.int().min(1),
  score: z.number(),
};

/**
 * What a user turn retrieved for its `[CONTEXT]` block (AGN-002): the workspace and query used, each chunk sent
 * with its per-turn id (`ctx_N`), the chunks not sent again because the provider already holds them, and how
 * many tokens the block took.
 */
export const RetrievalTraceSchema = z.strictObject({
  outcome: z.enum(RETRIEVAL_OUTCOMES),
  /** The request's `workspaceId`, else the session's last one; null when there is none. */
  workspaceId: z.string().nullable(),
  /** Whether `workspaceId` came with the request or was the session's last one. */
  workspaceFrom: z.enum(["request", "session"]).nullable(),
  /** The text searched: the instruction and the artifacts' paths and names. Empty without a workspace. */
  query: z.string(),
  chunks: z.array(z.strictObject({ id: z.string(), ...chunkLines })),
  /** Matches sent earlier in the session's live continuation chain, listed on the block's last line. */
  previouslyProvided: z.array(z.strictObject(chunkLines)),
  /** Matches left out because they did not fit `maxContextTokens`. */
  skipped: z.int().min(0),
  /** Tokens of the block as sent (0 when omitted). */
  tokens: z.int().min(0),
});

export type RetrievalOutcome = (typeof RETRIEVAL_OUTCOMES)[number];
export type RetrievalTrace = z.output<typeof RetrievalTraceSchema>;
