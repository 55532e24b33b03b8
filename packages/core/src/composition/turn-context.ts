import {
  type InvokeResult,
  type InvokeWarning,
  ok,
  type RetrievalTrace,
  type UserTurnRequest,
  type WarningCode,
} from "@aptix/contracts";
import type { RetrievalSettings } from "../catalog/conversation-context.js";
import type { ContextRetriever, RetrievedChunk } from "../ports/context-retriever.js";
import {
  type ConversationCursor,
  MAX_PROVIDED_CHUNKS,
  type ProvidedChunk,
} from "../records/conversation-cursor.js";
import { contextIdOf, formatRagContextBlock, rankedRagChunks } from "../retrieval/rag-context-block.js";
import { estimateTokens } from "./token-estimate.js";

/** What a user turn's retrieval adds to its message, its trace, and the cursor once the message is sent. */
export interface TurnContext {
  /** The `[CONTEXT]` block; absent when it is omitted. */
  contextBlock?: string;
  /** Absent when the service has no retriever. */
  trace?: RetrievalTrace;
  /** The cursor's workspace and sent chunks once the provider holds this turn's message. */
  held: Pick<ConversationCursor, "workspaceId" | "providedChunks">;
}

export interface TurnContextInput {
  retriever: ContextRetriever | undefined;
  principal: string;
  sessionId: string;
  request: UserTurnRequest;
  /** Where the turn starts: the session's last workspace and the chunks the provider already holds. */
  cursor: ConversationCursor;
  settings: RetrievalSettings;
}

/** Tokens as OpenAI's current models count them (o200k_base); text that looks like a special token is text. */
const NO_SPECIAL_TOKENS = { disallowedSpecial: new Set<string>() };

/**
 * Turn-time retrieval (docs/knowledge.md): the `[CONTEXT]` block of a user turn. The workspace is the request's
 * `workspaceId`, else the session's last one (kept on the cursor); the query is the instruction with the
 * artifacts' paths and names, filtered by `ragScope` and boosted by `repo` and `language`. Of the `topK` best
 * matches, those the provider already holds (sent earlier in the continuation chain) are named on the block's last
 * line instead of repeated; the others go in rank order as `ctx_1…ctx_N` while the block stays within
 * `maxContextTokens` (a chunk that does not fit is skipped). No workspace, an unknown one (with a
 * `WORKSPACE_NOT_FOUND` warning), an empty index or no match omits the block; a retriever that fails fails the turn.
 */
export async function retrieveTurnContext(input: TurnContextInput): Promise<InvokeResult<TurnContext>> {
  const { retriever, request, cursor, settings } = input;
  const workspaceId = request.workspaceId ?? cursor.workspaceId;
  const held: TurnContext["held"] = {
    ...(workspaceId !== undefined ? { workspaceId } : {}),
    ...(cursor.providedChunks !== undefined ? { providedChunks: cursor.providedChunks } : {}),
  };
  if (!retriever) return ok({ held });
  const where = { workspaceId: workspaceId ?? null, workspaceFrom: workspaceOrigin(request, cursor) };
  const omitted = (outcome: RetrievalTrace["outcome"], query = "", warnings: InvokeWarning[] = []) =>
    ok({ held, trace: omittedTrace(where, outcome, query) }, warnings);
  if (workspaceId === undefined) return omitted("no_workspace");

  const query = queryText(request);
  // A retrieval that throws (the index's database, the embedder) fails the round like any other fault the client
  // did not cause: INTERNAL, or NOT_READY when the database is out of reach, its detail for the operator only (it
  // may quote the index's statement, with the user's query among its parameters).
  const retrieval = await retriever.retrieve({
    principal: input.principal,
    sessionId: input.sessionId,
    turnId: request.turnId,
    workspaceId,
    text: query,
    scope: request.ragScope ?? [],
    boost: {
      ...(request.repo !== undefined ? { repo: request.repo } : {}),
      ...(request.language !== undefined ? { language: request.language } : {}),
    },
    limit: settings.topK,
  });
  if (retrieval.type === "unknown_workspace") {
    // The turn runs without [CONTEXT]: its client hears why, and can push the workspace.
    const warning: InvokeWarning = {
      code: "WORKSPACE_NOT_FOUND" satisfies WarningCode,
      message: `Workspace ${JSON.stringify(workspaceId)} is not indexed for you: the turn ran without its [CONTEXT] block. Push the workspace's documents to index it.`,
    };
    return omitted(retrieval.type, query, [warning]);
  }
  if (retrieval.type !== "found") return omitted(retrieval.type, query);
  const matches = retrieval.chunks.slice(0, settings.topK);
  if (matches.length === 0) return omitted("no_match", query);
  return ok(matchedContext({ matches, cursor, settings, held, trace: { ...where, query } }));
}

/** The trace of a turn whose block is omitted before any chunk is matched. */
function omittedTrace(
  where: Pick<RetrievalTrace, "workspaceId" | "workspaceFrom">,
  outcome: RetrievalTrace["outcome"],
  query: string,
): RetrievalTrace {
  return {
    outcome,
    ...where,
    query,
    chunks: [],
    previouslyProvided: [],
    skipped: 0,
    tokens: 0,
  };
}

/**
 * The block of a turn's matches: those the provider holds named, the others in rank order while the block fits
 * `maxContextTokens`; and, when there is a block, the chunks the provider holds once it is sent.
 */
function matchedContext(input: {
  matches: readonly RetrievedChunk[];
  cursor: ConversationCursor;
  settings: RetrievalSettings;
  held: TurnContext["held"];
  trace: Pick<RetrievalTrace, "workspaceId" | "workspaceFrom" | "query">;
}): TurnContext {
  const { matches, cursor } = input;
  const sent = new Set((cursor.providedChunks ?? []).map((chunk) => chunk.chunkId));
  const previously = matches.filter((chunk) => sent.has(chunk.chunkId)).map(providedChunk);
  const { selected, skipped } = fittingChunks(matches, sent, previously, input.settings.maxContextTokens);
  const contextBlock = formatRagContextBlock(rankedRagChunks(selected), previously);
  const traced = (chunk: RetrievedChunk) => ({ ...providedChunk(chunk), score: chunk.score });
  const trace: RetrievalTrace = {
    outcome: contextBlock === undefined ? "none_fit" : "included",
    ...input.trace,
    chunks: selected.map((chunk, index) => ({ id: contextIdOf(index), ...traced(chunk) })),
    previouslyProvided: matches.filter((chunk) => sent.has(chunk.chunkId)).map(traced),
    skipped,
    tokens: contextBlock === undefined ? 0 : estimateTokens(contextBlock, NO_SPECIAL_TOKENS),
  };
  if (contextBlock === undefined) return { held: input.held, trace };
  // Chunks named again move to the end with the new ones: the bound forgets the longest unused first.
  const named = new Set([...previously, ...selected].map((chunk) => chunk.chunkId));
  const providedChunks = [
    ...(cursor.providedChunks ?? []).filter((chunk) => !named.has(chunk.chunkId)),
    ...previously,
    ...selected.map(providedChunk),
  ].slice(-MAX_PROVIDED_CHUNKS);
  return { contextBlock, trace, held: { ...input.held, providedChunks } };
}

/** The matches not `sent` before, in rank order, each while the block with it stays within `maxTokens`. */
function fittingChunks(
  matches: readonly RetrievedChunk[],
  sent: ReadonlySet<string>,
  previously: readonly ProvidedChunk[],
  maxTokens: number,
): { selected: RetrievedChunk[]; skipped: number } {
  const selected: RetrievedChunk[] = [];
  let skipped = 0;
  for (const chunk of matches) {
    if (sent.has(chunk.chunkId)) continue;
    const candidate = formatRagContextBlock(rankedRagChunks([...selected, chunk]), previously) ?? "";
    if (estimateTokens(candidate, NO_SPECIAL_TOKENS) <= maxTokens) selected.push(chunk);
    else skipped++;
  }
  return { selected, skipped };
}

/** The text a turn searches its workspace for: its instruction, then each artifact's path and file name. */
function queryText(request: UserTurnRequest): string {
  const artifacts = (request.inputArtifacts ?? []).flatMap((artifact) => [
    artifact.relativePath,
    artifact.fileName,
  ]);
  return [request.instruction ?? "", ...artifacts].filter((part) => part !== "").join("\n");
}

function workspaceOrigin(
  request: UserTurnRequest,
  cursor: ConversationCursor,
): RetrievalTrace["workspaceFrom"] {
  if (request.workspaceId !== undefined) return "request";
  return cursor.workspaceId !== undefined ? "session" : null;
}

function providedChunk({ chunkId, path, startLine, endLine }: RetrievedChunk): ProvidedChunk {
  return { chunkId, path, startLine, endLine };
}
