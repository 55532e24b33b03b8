import { readFile } from "node:fs/promises";
import { formatFieldPath } from "@aptix/contracts";
import { AgentCatalog, CHANGE_MODE_TOOL_NAME, type ServerTool } from "@aptix/core";
import { type CatalogConfig, catalogConfigSchema } from "./catalog-config-schema.js";
import { ConfigError } from "./config-error.js";
import { DEFAULT_CATALOG } from "./default-catalog.js";
import { DEFAULT_PROVIDER_IDS } from "./provider-ids.js";

/** The server tools a checked config declares (built-ins, MCP servers' tools); none by default. */
export type ServerToolsOf = (config: CatalogConfig) => Promise<ServerTool[]>;

/**
 * Reads and checks the catalog: shape and provider names by the zod schema, then the server tools `serverTools`
 * makes of it, then cross-references by core (a client tool named like a server tool among them). Bad config
 * stops start-up. The built-in default is checked too: the server may have been given other providers.
 */
export async function loadCatalog(
  path: string | undefined,
  providerIds: readonly string[] = DEFAULT_PROVIDER_IDS,
  serverTools: ServerToolsOf = async () => [],
): Promise<{ catalog: AgentCatalog; source: string; config: CatalogConfig }> {
  const source = path ?? "built-in default config";
  const parsed = catalogConfigSchema(providerIds).safeParse(
    path === undefined ? DEFAULT_CATALOG : await readJson(path),
  );
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) =>
      issue.code === "unrecognized_keys"
        ? issue.keys.map((key) => `${formatFieldPath([...issue.path, key])}: is not a known key`).join("\n  ")
        : `${formatFieldPath(issue.path) || "(file)"}: ${issue.message}`,
    );
    throw new ConfigError(`APTIX_CONFIG: ${source} is invalid:\n  ${problems.join("\n  ")}`);
  }
  const tools = await serverTools(parsed.data);
  const names = new Set<string>([CHANGE_MODE_TOOL_NAME]);
  for (const tool of tools) {
    const { name } = tool.definition;
    if (names.has(name)) {
      throw new ConfigError(
        `APTIX_CONFIG: ${source} is inconsistent:\n  server tool ${JSON.stringify(name)} is declared twice (serverTools or an MCP server's tools)`,
      );
    }
    names.add(name);
  }
  const created = AgentCatalog.create(parsed.data, tools);
  if (!created.successful) {
    const fields = (created.errors[0].details?.fields ?? []) as Array<{ path: string; message: string }>;
    throw new ConfigError(
      `APTIX_CONFIG: ${source} is inconsistent:\n  ${fields.map((f) => `${f.path}: ${f.message}`).join("\n  ")}`,
    );
  }
  return { catalog: created.result, source, config: parsed.data };
}

async function readJson(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new ConfigError(
      `APTIX_CONFIG: cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ConfigError(
      `APTIX_CONFIG: ${path} is not JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
