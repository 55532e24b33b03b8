/**
 * `pnpm bench` for the workspace index (docs/knowledge.md): indexes real TypeScript trees that ship in
 * node_modules (zod's, OpenAI's and Anthropic's SDK sources, over 10,000 chunks together) into PGlite and
 * Postgres, and prints indexing throughput, lexical search latency, and retrieval quality on the questions of
 * `questions.json` (recall@5 and MRR@10 by file) beside MiniSearch's BM25 over the same chunks.
 *
 * Run once, by hand: `pnpm --filter @aptix/store-drizzle bench` (Postgres at TEST_DATABASE_URL).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import {
  codeSearchText,
  type IndexDocumentInput,
  sha256ContentHashService,
  type WorkspaceIndex,
} from "@aptix/core";
import { chunkDocument, codeQueryTerms } from "@aptix/core/testing";
import MiniSearch from "minisearch";
import postgres from "postgres";
import { type AptixStore, openStore } from "../src/index.js";

interface Question {
  question: string;
  /** Paths (as indexed: `<tree>/<path in its src>`) whose chunks answer it. */
  expected: string[];
}

interface Quality {
  recallAt5: number;
  mrr: number;
}

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const KEY = { principal: "bench", workspaceId: "sources" };
/** Documents per upsert: the HTTP route's most. */
const BATCH = 500;
const SEARCH_LIMIT = 10;
/** Each question is searched this many times for the latency percentiles. */
const LATENCY_ROUNDS = 10;
const EXTENSIONS = /\.(ts|js|md)$/;

/**
 * The trees indexed: the sources these packages ship, at the exact versions this package's devDependencies pin,
 * so the files `questions.json` names stay where they are.
 */
const TREES = [
  { name: "zod", folder: "node_modules/zod/src" },
  { name: "openai", folder: "node_modules/openai/src" },
  { name: "anthropic", folder: "node_modules/@anthropic-ai/sdk/src" },
] as const;

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && EXTENSIONS.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

function sourceDocuments(): IndexDocumentInput[] {
  let nextChunk = 0;
  return TREES.flatMap((tree) => {
    const root = fileURLToPath(new URL(`../${tree.folder}`, import.meta.url));
    return filesUnder(root).map((file): IndexDocumentInput => {
      const path = `${tree.name}/${relative(root, file)}`;
      const contents = readFileSync(file, "utf8");
      const chunks = chunkDocument({ path, contents });
      return {
        path,
        contentHash: sha256ContentHashService.hash(contents),
        language: chunks[0]?.language ?? "text",
        repo: tree.name,
        tags: [],
        metadata: {},
        chunks: chunks.map((chunk) => ({
          chunkId: `c${++nextChunk}`,
          startLine: chunk.startLine,
          endLine: chunk.endLine,
          text: chunk.text,
          searchText: codeSearchText(chunk.text),
        })),
      };
    });
  });
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/** Recall@5 and MRR@10 by file: a question is answered by the first chunk of one of its expected files. */
function quality(questions: readonly Question[], rankedPaths: (question: string) => string[]): Quality {
  let found = 0;
  let reciprocal = 0;
  for (const { question, expected } of questions) {
    const rank = rankedPaths(question).findIndex((path) => expected.includes(path));
    if (rank >= 0 && rank < 5) found++;
    if (rank >= 0) reciprocal += 1 / (rank + 1);
  }
  return { recallAt5: found / questions.length, mrr: reciprocal / questions.length };
}

async function measureStore(
  label: string,
  store: AptixStore,
  documents: readonly IndexDocumentInput[],
  questions: readonly Question[],
) {
  const index: WorkspaceIndex = store.workspaceIndex;
  const started = performance.now();
  let chunks = 0;
  for (let start = 0; start < documents.length; start += BATCH) {
    const outcome = await index.upsertDocuments({
      key: KEY,
      documents: documents.slice(start, start + BATCH),
      replace: false,
    });
    chunks = outcome.chunks;
  }
  const seconds = (performance.now() - started) / 1000;

  const search = async (question: string) =>
    (await index.searchLexical({
      key: KEY,
      terms: codeQueryTerms(question),
      scope: [],
      boost: {},
      limit: SEARCH_LIMIT,
    })) ?? [];
  const ranked = new Map<string, string[]>();
  for (const { question } of questions)
    ranked.set(
      question,
      (await search(question)).map((chunk) => chunk.path),
    );
  const latencies: number[] = [];
  for (let round = 0; round < LATENCY_ROUNDS; round++) {
    for (const { question } of questions) {
      const before = performance.now();
      await search(question);
      latencies.push(performance.now() - before);
    }
  }
  latencies.sort((a, b) => a - b);
  return {
    label,
    files: documents.length,
    chunks,
    filesPerSecond: documents.length / seconds,
    chunksPerSecond: chunks / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    searches: latencies.length,
    ...quality(questions, (question) => ranked.get(question) ?? []),
  };
}

function miniSearchQuality(
  documents: readonly IndexDocumentInput[],
  questions: readonly Question[],
  codeAware: boolean,
): Quality & { label: string } {
  const search = new MiniSearch<{ id: string; path: string; text: string }>({
    fields: ["path", "text"],
    storeFields: ["path"],
  });
  search.addAll(
    documents.flatMap((document) =>
      (document.chunks ?? []).map((chunk) => ({
        id: chunk.chunkId,
        path: codeAware ? codeSearchText(document.path) : document.path,
        text: codeAware ? chunk.searchText : chunk.text,
      })),
    ),
  );
  const pathOf = new Map(
    documents.flatMap((document) => (document.chunks ?? []).map((chunk) => [chunk.chunkId, document.path])),
  );
  return {
    label: codeAware ? "MiniSearch BM25, code-aware terms" : "MiniSearch BM25, its own tokens",
    ...quality(questions, (question) =>
      search
        .search(codeAware ? codeQueryTerms(question).join(" ") : question)
        .slice(0, SEARCH_LIMIT)
        .map((result) => pathOf.get(String(result.id)) ?? ""),
    ),
  };
}

async function main(): Promise<void> {
  const questions = JSON.parse(
    readFileSync(new URL("./questions.json", import.meta.url), "utf8"),
  ) as Question[];
  const documents = sourceDocuments();
  const paths = new Set(documents.map((document) => document.path));
  const unknown = questions.flatMap((question) => question.expected.filter((path) => !paths.has(path)));
  if (unknown.length > 0)
    throw new Error(`questions.json names files that are not indexed: ${unknown.join(", ")}`);

  const results = [];
  const pglite = await openStore("memory://");
  try {
    results.push(await measureStore("PGlite (in memory)", pglite, documents, questions));
  } finally {
    await pglite.close();
  }
  const schema = `aptix_bench_${process.pid}`;
  const postgresStore = await openStore(TEST_DATABASE_URL, { schema });
  try {
    results.push(await measureStore("Postgres", postgresStore, documents, questions));
  } finally {
    await postgresStore.close();
    const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop schema if exists "${schema}" cascade`);
    await admin.end();
  }

  const fixed = (value: number, digits = 1) => value.toFixed(digits);
  console.log(
    `\nWorkspace index: ${documents.length} files, ${results[0]?.chunks} chunks, ${questions.length} questions\n`,
  );
  console.table(
    Object.fromEntries(
      results.map((result) => [
        result.label,
        {
          "files/s": fixed(result.filesPerSecond, 0),
          "chunks/s": fixed(result.chunksPerSecond, 0),
          "search p50 ms": fixed(result.p50, 2),
          "search p99 ms": fixed(result.p99, 2),
          searches: result.searches,
        },
      ]),
    ),
  );
  const rows = [
    ...results.map((result) => ({
      label: `Aptix ${result.label}`,
      recallAt5: result.recallAt5,
      mrr: result.mrr,
    })),
    miniSearchQuality(documents, questions, false),
    miniSearchQuality(documents, questions, true),
  ];
  console.table(
    Object.fromEntries(
      rows.map((row) => [row.label, { "recall@5": fixed(row.recallAt5, 3), "MRR@10": fixed(row.mrr, 3) }]),
    ),
  );
}

await main();
