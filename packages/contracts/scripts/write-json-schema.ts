// Writes schema/*.json from the zod schemas. A test fails when the checked-in files differ from this output.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { contractJsonSchemas } from "../src/json-schema.js";

const directory = join(import.meta.dirname, "..", "schema");
mkdirSync(directory, { recursive: true });
for (const [file, schema] of Object.entries(contractJsonSchemas())) {
  writeFileSync(join(directory, file), `${JSON.stringify(schema, null, 2)}\n`);
  console.log(`wrote schema/${file}`);
}
