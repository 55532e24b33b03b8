import { readFile } from "node:fs/promises";
import { formatFieldPath } from "@aptix/contracts";
import { AgentCatalog } from "@aptix/core";
import { type CatalogConfig, CatalogConfigSchema } from "./catalog-config-schema.js";
import { ConfigError } from "./config-error.js";
import { DEFAULT_CATALOG } from "./default-catalog.js";

/** Reads and checks the catalog: shape by the zod schema, cross-references by core. Bad config stops start-up. */
export async function loadCatalog(
  path: string | undefined,
): Promise<{ catalog: AgentCatalog; source: string }> {
  let config: CatalogConfig = DEFAULT_CATALOG;
  const source = path ?? "built-in default config";
  if (path !== undefined) {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      throw new ConfigError(
        `APTIX_CONFIG: cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new ConfigError(
        `APTIX_CONFIG: ${path} is not JSON: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const parsed = CatalogConfigSchema.safeParse(json);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) =>
        issue.code === "unrecognized_keys"
          ? issue.keys
              .map((key) => `${formatFieldPath([...issue.path, key])}: is not a known key`)
              .join("\n  ")
          : `${formatFieldPath(issue.path) || "(file)"}: ${issue.message}`,
      );
      throw new ConfigError(`APTIX_CONFIG: ${path} is invalid:\n  ${problems.join("\n  ")}`);
    }
    config = parsed.data;
  }
  const created = AgentCatalog.create(config);
  if (!created.successful) {
    const fields = (created.errors[0].details?.fields ?? []) as Array<{ path: string; message: string }>;
    throw new ConfigError(
      `APTIX_CONFIG: ${source} is inconsistent:\n  ${fields.map((f) => `${f.path}: ${f.message}`).join("\n  ")}`,
    );
  }
  return { catalog: created.result, source };
}
