import { readFile } from "node:fs/promises";
import { formatFieldPath } from "@aptix/contracts";
import { AgentCatalog } from "@aptix/core";
import { catalogConfigSchema } from "./catalog-config-schema.js";
import { ConfigError } from "./config-error.js";
import { DEFAULT_CATALOG } from "./default-catalog.js";
import { DEFAULT_PROVIDER_IDS } from "./provider-ids.js";

/**
 * Reads and checks the catalog: shape and provider names by the zod schema, cross-references by core. Bad
 * config stops start-up. The built-in default is checked too: the server may have been given other providers.
 */
export async function loadCatalog(
  path: string | undefined,
  providerIds: readonly string[] = DEFAULT_PROVIDER_IDS,
): Promise<{ catalog: AgentCatalog; source: string }> {
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
  const created = AgentCatalog.create(parsed.data);
  if (!created.successful) {
    const fields = (created.errors[0].details?.fields ?? []) as Array<{ path: string; message: string }>;
    throw new ConfigError(
      `APTIX_CONFIG: ${source} is inconsistent:\n  ${fields.map((f) => `${f.path}: ${f.message}`).join("\n  ")}`,
    );
  }
  return { catalog: created.result, source };
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
