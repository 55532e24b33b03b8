import { type RagScopeCondition, validateWorkspaceSearchRequest } from "@aptix/contracts";
import type { ArgumentsCheck, ServerTool } from "../ports/server-tool.js";
import { formatRagContextBlock, rankedRagChunks } from "../retrieval/rag-context-block.js";
import type { WorkspaceKnowledge } from "../retrieval/workspace-knowledge.js";

/** The built-in `knowledge_search` (docs/server-tools.md): the model searches the turn's workspace index itself. */
const KNOWLEDGE_SEARCH_TOOL_NAME = "knowledge_search";

export interface KnowledgeSearchArguments {
  query: string;
  ragScope?: RagScopeCondition[];
  limit: number;
}

/**
 * Searches the turn's workspace (the request's `workspaceId`, else the session's last one) and answers the
 * matching chunks in the `[CONTEXT]` chunk format, `ctx_1…ctx_N` in rank order. Arguments are judged as the
 * search route judges its body. No workspace, or an unknown one, is an error output the model can act on.
 */
export function createKnowledgeSearchTool(
  knowledge: Pick<WorkspaceKnowledge, "search">,
  name: string = KNOWLEDGE_SEARCH_TOOL_NAME,
): ServerTool<KnowledgeSearchArguments> {
  return {
    definition: {
      name,
      description:
        "Search the user's workspace (its indexed files) for code or text. Answers the best matching chunks " +
        "with their path and lines. Narrow it with ragScope conditions on path, language, repo, tag or a " +
        "metadata key.",
      parameters: {
        type: "object",
        properties: {
          query: { type: "string", description: "What to look for: identifiers, words, a question." },
          ragScope: {
            type: "array",
            description:
              "Conditions every chunk must meet, e.g. { key: 'language', operator: '==', values: ['go'] }.",
            items: {
              type: "object",
              properties: {
                key: { type: "string" },
                operator: { type: "string", enum: ["==", "!=", "contains", "does_not_contain"] },
                values: { type: "array", items: { type: "string" } },
              },
              required: ["key", "operator", "values"],
            },
          },
          limit: {
            type: "integer",
            minimum: 1,
            maximum: 50,
            description: "At most this many chunks (default 8).",
          },
        },
        required: ["query"],
      },
    },
    parseArguments(args: unknown): ArgumentsCheck<KnowledgeSearchArguments> {
      const checked = validateWorkspaceSearchRequest(args);
      if (!checked.successful) return { ok: false, message: checked.errors[0].message };
      const { query, ragScope, limit } = checked.result;
      return { ok: true, value: { query, limit, ...(ragScope ? { ragScope } : {}) } };
    },
    async execute(args, context) {
      const { workspaceId } = context;
      if (workspaceId === undefined) {
        return { errorMessage: "This conversation names no workspace, so there is nothing to search." };
      }
      let found: Awaited<ReturnType<typeof knowledge.search>>;
      try {
        found = await knowledge.search({
          principal: context.principal,
          workspaceId,
          query: args.query,
          limit: args.limit,
          ...(args.ragScope ? { ragScope: args.ragScope } : {}),
          // The query's embedding is the turn's usage, as retrieval's is.
          asking: { sessionId: context.sessionId, turnId: context.turnId },
        });
      } catch (error) {
        // The index's failure is the service's: what it threw (a driver's message, with the statement's
        // parameters) must not reach the model or the client in TOOL_FAILED.
        throw new Error("the workspace index could not be read", { cause: error });
      }
      if (!found.successful) return { errorMessage: found.errors[0].message };
      const block = formatRagContextBlock(rankedRagChunks(found.result));
      return {
        result: block ?? `No chunk of workspace ${workspaceId} matches ${JSON.stringify(args.query)}.`,
      };
    },
  };
}
