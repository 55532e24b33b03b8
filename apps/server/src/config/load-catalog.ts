import { readFile } from "node:fs/promises";
import { formatFieldPath } from "@aptix/contracts";
import { AgentCatalog, CHANGE_MODE_TOOL_NAME, type ServerTool } from "@aptix/core";
import { type CatalogConfig, catalogConfigSchema } from "./catalog-config-schema.js";
import { ConfigError } from "./config-error.js";
import { DEFAULT_CATALOG } from "./default-catalog.js";
import { knownKeyHint } from "./known-key-hint.js";
import { DEFAULT_PROVIDER_IDS } from "./provider-ids.js";

/** The server tools a checked config declares (built-ins, MCP servers' tools); none by default. */
export type ServerToolsOf = (config: CatalogConfig) => Promise<ServerTool[]>;

/** `APTIX_MODEL` and `APTIX_PROVIDER`: the default conversation context's (the first one's) model and provider. */
interface DefaultContextOverride {
  model?: string | undefined;
  provider?: string | undefined;
}

/** The config a file goes over: the built-in default, or another one (the demo's), with the name start-up shows. */
interface BuiltInConfig {
  config: CatalogConfig;
  name: string;
}

/**
 * Reads and checks the catalog: the file over the built-in default (a key the file leaves out keeps the default's
 * value, one it gives replaces it whole), then `override` on the default context; shape and provider names by
 * the zod schema, then the server tools `serverTools` makes of it, then cross-references by core (a client tool
 * named like a server tool among them). Bad config stops start-up. The built-in default is checked too: the
 * server may have been given other providers.
 */
export async function loadCatalog(
  path: string | undefined,
  providerIds: readonly string[] = DEFAULT_PROVIDER_IDS,
  serverTools: ServerToolsOf = async () => [],
  override: DefaultContextOverride = {},
  builtIn: BuiltInConfig = { config: DEFAULT_CATALOG, name: "built-in default config" },
): Promise<{ catalog: AgentCatalog; source: string; config: CatalogConfig }> {
  const source = path ?? builtIn.name;
  const file = path === undefined ? {} : await readJson(path);
  const schema = catalogConfigSchema(providerIds);
  const parsed = schema.safeParse(overridden({ ...builtIn.config, ...file }, override, providerIds));
  if (!parsed.success) {
    const hint = knownKeyHint(schema);
    const problems = parsed.error.issues.flatMap((issue) =>
      issue.code === "unrecognized_keys"
        ? issue.keys.map((key) => `${formatFieldPath([...issue.path, key])}: is not a known key${hint(key)}`)
        : [`${formatFieldPath(issue.path) || "(file)"}: ${issue.message}`],
    );
    // By path: zod's order of issues is not the same on every runtime (Node 24 gave another than Node 20).
    throw new ConfigError(`APTIX_CONFIG: ${source} is invalid`, problems.sort());
  }
  const tools = await serverTools(parsed.data);
  const names = new Set<string>([CHANGE_MODE_TOOL_NAME]);
  for (const tool of tools) {
    const { name } = tool.definition;
    if (names.has(name)) {
      throw new ConfigError(`APTIX_CONFIG: ${source} is inconsistent`, [
        `server tool ${JSON.stringify(name)} is declared twice (serverTools or an MCP server's tools)`,
      ]);
    }
    names.add(name);
  }
  const created = AgentCatalog.create(parsed.data, tools);
  if (!created.successful) {
    const fields = (created.errors[0].details?.fields ?? []) as Array<{ path: string; message: string }>;
    throw new ConfigError(
      `APTIX_CONFIG: ${source} is inconsistent`,
      fields.map((f) => `${f.path}: ${f.message}`),
    );
  }
  return { catalog: created.result, source, config: parsed.data };
}

/**
 * `config` with the first conversation context's model and provider replaced: a provider is checked here so
 * the error names the variable; a new provider needs a model of its own (the default's is the old provider's).
 */
function overridden(
  config: Record<string, unknown>,
  { model, provider }: DefaultContextOverride,
  providerIds: readonly string[],
): Record<string, unknown> {
  if (model === undefined && provider === undefined) return config;
  if (provider !== undefined && !providerIds.includes(provider)) {
    throw new ConfigError(
      `APTIX_PROVIDER: ${JSON.stringify(provider)} is not a provider this server has (${providerIds.join(", ")})`,
    );
  }
  const contexts = config.conversationContexts;
  const [first, ...rest] = Array.isArray(contexts) ? (contexts as unknown[]) : [];
  // A file whose contexts are malformed is reported by the schema, under the file's own paths.
  if (typeof first !== "object" || first === null) return config;
  const context = first as Record<string, unknown>;
  if (provider !== undefined && provider !== context.provider && model === undefined) {
    throw new ConfigError(
      `APTIX_PROVIDER: ${provider} needs APTIX_MODEL too: the default context's model ${JSON.stringify(context.model)} is for the provider ${context.provider}`,
    );
  }
  return {
    ...config,
    conversationContexts: [
      {
        ...context,
        ...(model === undefined ? {} : { model }),
        ...(provider === undefined ? {} : { provider }),
      },
      ...rest,
    ],
  };
}

/** The file's JSON object: its keys are the default config's (docs/configuration.md), each optional. */
async function readJson(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new ConfigError(
      `APTIX_CONFIG: cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(
      `APTIX_CONFIG: ${path} is not JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`APTIX_CONFIG: ${path} must hold a JSON object`);
  }
  return parsed as Record<string, unknown>;
}
