import { WEBHOOK_EVENT_TYPES } from "@aptix/core";
import { z } from "zod";

const id = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,128}$/, "must be 1–128 characters of letters, digits, '.', '_', ':' or '-'");
const toolName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1–64 characters of letters, digits, '_' or '-'");

/** The built-in server tools a `serverTools` entry can name (docs/server-tools.md). */
const BUILTIN_SERVER_TOOLS = ["knowledge_search", "create_file"] as const;

/** An MCP server's name: its tools are `<server>__<tool>`, so it holds no `__` itself. */
const mcpServerName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,32}$/, "must be 1–32 characters of letters, digits, '_' or '-'")
  .refine((name) => !name.includes("__"), "must not contain '__' (it separates the server from the tool)");
const stringMap = z.record(z.string(), z.string());
/** `always`: a call runs only once the user approved it (docs/server-tools.md). */
const approval = z.enum(["always", "never"]);

/** `serverTools`, `mcpServers` and `files` (docs/server-tools.md): what the server runs itself, beside the client tools. */
const serverToolsConfig = {
  serverTools: z
    .array(
      // Without `builtin`, an entry sets the approval of an MCP server's tool, named `<server>__<tool>`.
      z
        .strictObject({
          name: toolName,
          builtin: z.enum(BUILTIN_SERVER_TOOLS).optional(),
          approval: approval.optional(),
        })
        .refine((entry) => entry.builtin !== undefined || entry.approval !== undefined, {
          path: ["builtin"],
          message: "is required unless the entry sets the `approval` of an MCP server's tool",
        }),
    )
    .superRefine(uniqueBy("name"))
    .optional(),
  mcpServers: z
    .array(
      z.discriminatedUnion("transport", [
        z.strictObject({
          name: mcpServerName,
          approval: approval.optional(),
          transport: z.literal("stdio"),
          command: z.string().min(1),
          args: z.array(z.string()).optional(),
          env: stringMap.optional(),
          cwd: z.string().min(1).optional(),
        }),
        z.strictObject({
          name: mcpServerName,
          approval: approval.optional(),
          transport: z.literal("http"),
          url: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }),
          headers: stringMap.optional(),
        }),
      ]),
    )
    .superRefine(uniqueBy("name"))
    .optional(),
  files: z
    .strictObject({
      /** How long a produced file is served (`FileRef.contentExpires`); default a week. */
      ttlSeconds: z.int().min(1).optional(),
      /** The largest file a server tool may produce; default 10 MiB. */
      maxBytes: z
        .int()
        .min(1)
        .max(100 * 1024 * 1024)
        .optional(),
    })
    .optional(),
};

const usdPerMTok = z.number().min(0);

/**
 * `prices` and `budgets` (docs/http-api.md): prices in USD per million tokens by model or `prefix*`, before the built-in
 * table; a principal's budgets over `APTIX_BUDGET_USD_MONTHLY` and `APTIX_BUDGET_TOKENS_DAILY`.
 */
const usageConfig = {
  prices: z
    .record(
      z.string().regex(/^[^*]+\*?$/, "must be a model name, or a prefix of names ending in a single '*'"),
      z.strictObject({ inputPerMTok: usdPerMTok, cachedInputPerMTok: usdPerMTok, outputPerMTok: usdPerMTok }),
    )
    .optional(),
  budgets: z
    .record(
      z.string().min(1),
      z.strictObject({ usdMonthly: z.number().min(0).optional(), tokensDaily: z.int().min(0).optional() }),
    )
    .optional(),
};

/**
 * `webhooks` (docs/operations.md, Webhooks): where events are posted, which ones (all when absent), for which
 * principals (all when absent), signed with the secret in the variable `secretEnv` names.
 */
const webhooksConfig = {
  webhooks: z
    .array(
      z.strictObject({
        url: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }),
        events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).min(1, "must name an event, or be left out").optional(),
        secretEnv: z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be the name of an environment variable"),
        principals: z.array(z.string().min(1)).min(1, "must name a principal, or be left out").optional(),
      }),
    )
    .superRefine(uniqueBy("url"))
    .optional(),
};

/** A refinement refusing two entries with the same `key`, naming the later one. */
function uniqueBy<K extends string>(key: K) {
  return (entries: Array<Record<K, string>>, context: z.RefinementCtx) => {
    const seen = new Set<string>();
    entries.forEach((entry, index) => {
      if (seen.has(entry[key])) {
        context.addIssue({
          code: "custom",
          path: [index, key],
          message: `repeats ${JSON.stringify(entry[key])}`,
        });
      }
      seen.add(entry[key]);
    });
  };
}

/**
 * The `APTIX_CONFIG` file (docs/configuration.md) for a server with these providers. Unknown keys are refused so a
 * typo never passes silently, and so is a provider with no adapter: its turns could only fail.
 */
export const catalogConfigSchema = (providerIds: readonly string[]) =>
  z.strictObject({
    conversationContexts: z
      .array(
        z.strictObject({
          id,
          bootPrompt: z.string().min(1),
          model: z.string().min(1),
          provider: z.string().refine((provider) => providerIds.includes(provider), {
            error: (issue) =>
              `${JSON.stringify(issue.input)} is not a provider this server has (${providerIds.join(", ")})`,
          }),
          defaultMode: z.string().min(1).optional(),
          maxOutputTokens: z.int().positive().optional(),
          /** The model's window and when to compact (docs/context-window.md); by the model's name when absent. */
          contextWindowTokens: z.int().min(1_000).optional(),
          compactAtRatio: z.number().gt(0).max(1).optional(),
          compactionModel: z.string().min(1).optional(),
          /** Bounds of a user turn's `[CONTEXT]` block (docs/knowledge.md). */
          retrieval: z
            .strictObject({
              topK: z.int().min(1).max(50).optional(),
              maxContextTokens: z.int().min(1).optional(),
            })
            .optional(),
        }),
      )
      .min(1),
    modes: z
      .array(
        z.strictObject({
          id,
          displayName: z.string().min(1),
          tools: z.array(toolName),
          toolChoice: toolName.nullable(),
          instructions: z.string(),
          welcomeMessage: z.string().optional(),
        }),
      )
      .min(1),
    clientTools: z.array(
      z.strictObject({
        name: toolName,
        description: z.string().min(1),
        parameters: z.record(z.string(), z.unknown()),
        strict: z.boolean().optional(),
      }),
    ),
    ...serverToolsConfig,
    ...usageConfig,
    ...webhooksConfig,
    /** Embeds workspace chunks for vector search beside the lexical one (docs/knowledge.md). */
    embeddings: z
      .strictObject({
        provider: z.literal("openai"),
        model: z.string().min(1),
        /** Texts per embeddings request; default 64. */
        batchSize: z.int().min(1).max(2048).optional(),
      })
      .optional(),
  });

export type CatalogConfig = z.infer<ReturnType<typeof catalogConfigSchema>>;
