/**
 * Refreshes `data/openai-schemas.json` from the official OpenAI OpenAPI document (a file path or an https url):
 *   pnpm --filter @aptix/testing-llm-servers openai:schemas <openai-openapi.yml | https://…/openapi.yaml>
 * The extract records the document's version and sha256; commit it with the tests it changes.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { extractSchemas, VALIDATED_SCHEMAS } from "../src/openai/extract-schemas.js";
import { OPENAI_SCHEMAS_FILE } from "../src/openai/openapi.js";

const from = process.argv[2];
if (!from) {
  console.error("usage: extract-openai-schemas <openai-openapi.yml | https url>");
  process.exit(2);
}
const text = /^https?:\/\//.test(from) ? await (await fetch(from)).text() : readFileSync(from, "utf8");
const extract = extractSchemas(parseYaml(text), text, VALIDATED_SCHEMAS);
writeFileSync(OPENAI_SCHEMAS_FILE, `${JSON.stringify(extract, null, 1)}\n`);
console.log(
  `${OPENAI_SCHEMAS_FILE}: ${Object.keys(extract.schemas).length} schemas from ${extract.source.title} ${extract.source.version} (sha256 ${extract.source.sha256.slice(0, 12)}…)`,
);
