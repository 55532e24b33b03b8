import { readdirSync } from "node:fs";
import { join, posix } from "node:path";
import { describe, expect, it } from "vitest";
import { importsUnder } from "./support/source-imports.js";

/**
 * Where each folder (or top-level file) of core's `src/` sits, lowest first (docs/architecture.md, "Layer
 * rule"). A part imports only parts on lower levels: the call graph runs entry → persistence → reasoner →
 * the steps, and each part sees only what it calls. Parts on one level are peers and import none of each
 * other, except on the ground level, which holds what every layer builds on rather than a layer.
 */
const LEVELS: readonly (readonly string[])[] = [
  [
    "records",
    "ports",
    "catalog",
    "retrieval",
    "defaults",
    "in-memory",
    "usage",
    "error-message.ts",
    "storable.ts",
  ],
  // The turn lifecycle: the table every status change is decided from, and the patches that end a turn.
  ["lifecycle"],
  // Layers 1–3 (AGN-027): the steps the Reasoner runs in turn; only the Reasoner goes from one to the next.
  ["composition", "llm-call", "server-tools"],
  // Layer 4: the loop, writing through the lease interface it names (`RoundLease`).
  ["reasoner"],
  // Layer 5: applies admissions and settles what the Reasoner returns.
  ["persistence"],
  // Entry's streamed rounds: records the Reasoner's text, follows turns through Persistence.
  ["streaming"],
  // Layer 6: admits a request, runs its round, answers it.
  ["entry"],
  // The published surfaces: the root exports and the testing kit.
  ["index.ts", "testing"],
];

const levelOf = new Map(LEVELS.flatMap((parts, level) => parts.map((part) => [part, level] as const)));

/** The folder a path under `src/` belongs to, or the file itself at the top (`.js` specifiers name `.ts` files). */
function partOf(path: string): string {
  const [first = "", ...rest] = path.split("/");
  return rest.length > 0 ? first : first.replace(/\.js$/, ".ts");
}

/** Each relative import that does not go down a level, as `file → specifier`; an unplaced part counts too. */
function importsAgainstTheOrder(imports: readonly { file: string; specifier: string }[]): string[] {
  return imports
    .filter(({ specifier }) => specifier.startsWith("."))
    .filter(({ file, specifier }) => {
      const from = partOf(file);
      const to = partOf(posix.join(posix.dirname(file), specifier));
      if (from === to) return false;
      const [fromLevel, toLevel] = [levelOf.get(from), levelOf.get(to)];
      if (fromLevel === undefined || toLevel === undefined) return true;
      return toLevel > fromLevel || (toLevel === fromLevel && fromLevel !== 0);
    })
    .map(({ file, specifier }) => `${file} → ${specifier}`);
}

describe("core's layers import downward only", () => {
  const root = join(import.meta.dirname, "..", "src");

  it("places every folder and top-level file of src/, and names no other", () => {
    const parts = readdirSync(root).sort();
    expect([...levelOf.keys()].sort()).toEqual(parts);
  });

  it("flags an import up a level or across peers, and lets one down a level or within the ground pass", () => {
    const imports = [
      { file: "reasoner/reasoner-step.ts", specifier: "../persistence/turn-persistence.js" },
      { file: "server-tools/knowledge-search-tool.ts", specifier: "../composition/rag-context-block.js" },
      { file: "catalog/agent-catalog.ts", specifier: "../server-tools/server-tool.js" },
      { file: "error-message.ts", specifier: "./entry/agent-service.js" },
      { file: "entry/admission.ts", specifier: "../../package.json" },
      { file: "persistence/turn-settlement.ts", specifier: "../reasoner/reasoner-step.js" },
      { file: "reasoner/reasoner-step.ts", specifier: "./answer-text.js" },
      { file: "ports/turn-store.ts", specifier: "../records/turn-record.js" },
      { file: "ports/context-retriever.ts", specifier: "../retrieval/document-chunk.js" },
      { file: "llm-call/llm-call-step.ts", specifier: "../error-message.js" },
      { file: "index.ts", specifier: "./entry/agent-service.js" },
      { file: "composition/composition-step.ts", specifier: "@aptix/contracts" },
    ];
    expect(importsAgainstTheOrder(imports)).toEqual([
      "reasoner/reasoner-step.ts → ../persistence/turn-persistence.js",
      "server-tools/knowledge-search-tool.ts → ../composition/rag-context-block.js",
      "catalog/agent-catalog.ts → ../server-tools/server-tool.js",
      "error-message.ts → ./entry/agent-service.js",
      "entry/admission.ts → ../../package.json",
    ]);
  });

  it("holds in src/", () => {
    expect(importsAgainstTheOrder(importsUnder(root))).toEqual([]);
  });
});
