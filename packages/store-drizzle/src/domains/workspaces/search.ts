import type { LexicalSearchInput, ScoredChunk, VectorSearchInput } from "@aptix/core";
import { and, asc, desc, eq, inArray, type SQL, sql } from "drizzle-orm";
import { rowsOf } from "../../rows-of.js";
import {
  workspaceChunks,
  workspaceDocuments,
  workspaceEmbeddings,
  workspaces,
  workspaceTerms,
} from "../../schema.js";
import type { StoreDatabase } from "../rows.js";
import { keyIs, workspaceIdOf } from "./documents.js";

type RagScopeCondition = LexicalSearchInput["scope"][number];

/**
 * BM25's parameters (term-frequency saturation, length normalization). A term's frequency in a chunk counts its
 * occurrences in the text (weight D) and `PATH_WEIGHT / TEXT_WEIGHT` times those in the path (weight A), read
 * with `ts_rank_cd` over the one term: with normalization 0 it adds up the weights of the term's occurrences.
 */
const BM25_K1 = 1.2;
const BM25_B = 0.75;
const TEXT_WEIGHT = 0.5;
const PATH_WEIGHT = 1;
/** ts_rank_cd's weights for labels D, C, B, A: the text is D, the path A. */
const TERM_WEIGHTS = `{${TEXT_WEIGHT},0,0,${PATH_WEIGHT}}`;
/**
 * About how many chunks a search scores: candidates are the chunks holding the rarest query terms, as many
 * terms as fit (and always the rarest one), so a question full of common words stays fast.
 */
const CANDIDATE_BUDGET = 500;

/** Query terms a search uses: the first ones, as a bound on the statement's size. */
const MAX_QUERY_TERMS = 64;
/** The factor a chunk's score is multiplied by for each boost hint (repo, language) it matches. */
const BOOST_FACTOR = 1.5;

/** A query term the workspace holds: in how many chunks (`df`), and its inverse document frequency. */
interface WeightedTerm {
  term: string;
  df: number;
  idf: number;
}

/** `WorkspaceIndex.searchLexical`: BM25 over Postgres full-text search (see `DrizzleWorkspaceIndex`). */
export async function searchLexical(
  db: StoreDatabase,
  input: LexicalSearchInput,
): Promise<ScoredChunk[] | undefined> {
  const counted = await countTerms(db, input);
  if (counted === undefined) return undefined;
  const { workspace, weighted } = counted;
  if (weighted.length === 0 || input.limit <= 0) return [];

  const averageLength = Math.max(workspace.termTotal / Math.max(workspace.chunks, 1), 1);
  const scope = scopeCondition(input.scope);
  // Ranks on the columns scoring needs, then reads the texts of the winners only.
  const rows = await db.execute(sql`
    with candidates as (${candidateChunks(weighted, workspace.id)}),
    ranked as (
      select workspace_chunks.chunk_id, (${bm25(weighted)}) * ${boostFactor(input.boost)} as score
      from candidates
      join workspace_chunks on workspace_chunks.chunk_id = candidates.chunk_id
      join workspace_documents on workspace_documents.id = workspace_chunks.document
      -- Once per row (offset 0 keeps the planner from copying each frequency into the score twice).
      cross join lateral (
        select ${termFrequencies(weighted)},
          ${BM25_K1}::float8 * (1 - ${BM25_B}::float8 + ${BM25_B}::float8 * workspace_chunks.term_count / ${averageLength}::float8) as k
        offset 0
      ) tf
      ${scope === undefined ? sql`` : sql`where ${scope}`}
      order by score desc, workspace_documents.path, workspace_chunks.start_line
      limit ${input.limit}
    )
    select workspace_chunks.chunk_id, workspace_documents.path, workspace_chunks.start_line,
      workspace_chunks.end_line, workspace_documents.language, workspace_documents.repo, workspace_documents.tags,
      workspace_documents.metadata, workspace_chunks.text, workspace_documents.content_hash, ranked.score
    from ranked
    join workspace_chunks on workspace_chunks.chunk_id = ranked.chunk_id
    join workspace_documents on workspace_documents.id = workspace_chunks.document
    order by ranked.score desc, workspace_documents.path, workspace_chunks.start_line`);
  return rowsOf(rows).map(scoredChunk);
}

/**
 * The workspace's counts and the query terms it holds, rarest first, in one read; undefined when there is no
 * such workspace.
 */
async function countTerms(db: StoreDatabase, input: LexicalSearchInput) {
  const terms = [...new Set(input.terms)].slice(0, MAX_QUERY_TERMS);
  const found = await db
    .select({
      id: workspaces.id,
      chunks: workspaces.chunkCount,
      termTotal: workspaces.termTotal,
      term: workspaceTerms.term,
      df: workspaceTerms.chunks,
    })
    .from(workspaces)
    .leftJoin(
      workspaceTerms,
      and(
        eq(workspaceTerms.workspace, workspaces.id),
        terms.length === 0 ? sql`false` : inArray(workspaceTerms.term, terms),
      ),
    )
    .where(keyIs(input.key));
  const workspace = found[0];
  if (workspace === undefined) return undefined;
  const weighted: WeightedTerm[] = found
    .flatMap(({ term, df }) => (term === null || df === null || df <= 0 ? [] : [{ term, df }]))
    .map(({ term, df }) => ({ term, df, idf: Math.log(1 + (workspace.chunks - df + 0.5) / (df + 0.5)) }))
    .sort((a, b) => a.df - b.df);
  return { workspace, weighted };
}

/**
 * Candidates: the chunks holding one of the rarest terms, as many terms as CANDIDATE_BUDGET allows (at least one);
 * every term then counts in their scores. A chunk with only common terms would rank low anyway.
 */
function candidateChunks(weighted: readonly WeightedTerm[], workspaceId: number): SQL {
  const candidateTerms: string[] = [];
  let budget = 0;
  for (const { term, df } of weighted) {
    if (candidateTerms.length > 0 && budget + df > CANDIDATE_BUDGET) break;
    candidateTerms.push(term);
    budget += df;
  }
  return sql.join(
    candidateTerms.map(
      (term) =>
        sql`select chunk_id from workspace_chunks where search_vector @@ ${tsqueryLexeme(term)}::tsquery and workspace = ${workspaceId}`,
    ),
    sql` union `,
  );
}

/** Each term's frequency in the chunk, as column `f<n>`: its `ts_rank_cd` over the term alone (see TERM_WEIGHTS). */
function termFrequencies(weighted: readonly WeightedTerm[]): SQL {
  return sql.join(
    weighted.map(
      ({ term }, at) =>
        sql`ts_rank_cd(${TERM_WEIGHTS}::float4[], workspace_chunks.search_vector, ${tsqueryLexeme(term)}::tsquery, 0) / ${TEXT_WEIGHT}::float8 as ${sql.identifier(`f${at}`)}`,
    ),
    sql`, `,
  );
}

/** BM25's sum over the terms, of the frequencies `termFrequencies` names and the length factor `tf.k`. */
function bm25(weighted: readonly WeightedTerm[]): SQL {
  return sql.join(
    weighted.map(({ idf }, at) => {
      const tf = sql`tf.${sql.identifier(`f${at}`)}`;
      return sql`${idf * (BM25_K1 + 1)}::float8 * ${tf} / (${tf} + tf.k)`;
    }),
    sql` + `,
  );
}

/**
 * `WorkspaceIndex.searchVector`: cosine similarity by pgvector, whose `vector` extension lives in `vectorSchema`
 * (undefined: the store was opened without it).
 */
export async function searchVector(
  db: StoreDatabase,
  schema: string | undefined,
  input: VectorSearchInput,
): Promise<ScoredChunk[] | undefined> {
  if (schema === undefined) {
    throw new Error(
      "Vector search needs the store opened with `vectors: true` (the pgvector `vector` extension).",
    );
  }
  const id = await workspaceIdOf(db, input.key, false);
  if (id === undefined) return undefined;
  if (input.limit <= 0) return [];
  const vector = sql.raw(`${quoteIdentifier(schema)}.vector`);
  const distance = sql`${sql.raw(quoteIdentifier(schema))}.cosine_distance(${workspaceEmbeddings.embedding}::${vector}, ${JSON.stringify(input.embedding)}::${vector})`;
  return embeddedChunks(
    db,
    sql<number>`1 - ${distance}`.mapWith(Number),
    and(
      eq(workspaceChunks.workspace, id),
      eq(workspaceEmbeddings.model, input.model),
      scopeCondition(input.scope),
    ),
    input.limit,
  );
}

/** The embedded chunks matching `where`, best `score` first, ties by path and line. */
async function embeddedChunks(db: StoreDatabase, score: SQL<number>, where: SQL | undefined, limit: number) {
  return db
    .select({
      chunkId: workspaceChunks.chunkId,
      path: workspaceDocuments.path,
      startLine: workspaceChunks.startLine,
      endLine: workspaceChunks.endLine,
      language: workspaceDocuments.language,
      repo: workspaceDocuments.repo,
      tags: workspaceDocuments.tags,
      metadata: workspaceDocuments.metadata,
      text: workspaceChunks.text,
      contentHash: workspaceDocuments.contentHash,
      score,
    })
    .from(workspaceChunks)
    .innerJoin(workspaceDocuments, eq(workspaceDocuments.id, workspaceChunks.document))
    .innerJoin(workspaceEmbeddings, eq(workspaceEmbeddings.chunkId, workspaceChunks.chunkId))
    .where(where)
    .orderBy(desc(score), asc(workspaceDocuments.path), asc(workspaceChunks.startLine))
    .limit(limit);
}

/**
 * `term` as a tsquery of that one lexeme, quoted so that no character of it reads as an operator. The terms a
 * search ranks by are lexemes of the workspace's vectors (found in `workspace_terms`), so no parsing is needed.
 */
function tsqueryLexeme(term: string): string {
  return `'${term.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;
}

function scoredChunk(row: Record<string, unknown>): ScoredChunk {
  return {
    chunkId: String(row.chunk_id),
    path: String(row.path),
    startLine: Number(row.start_line),
    endLine: Number(row.end_line),
    language: String(row.language),
    repo: row.repo === null ? null : String(row.repo),
    tags: row.tags as string[],
    metadata: row.metadata as Record<string, string>,
    text: String(row.text),
    contentHash: String(row.content_hash),
    score: Number(row.score),
  };
}

/** `BOOST_FACTOR` for each hint the chunk's document matches; never a filter. */
function boostFactor(boost: LexicalSearchInput["boost"]): SQL {
  const factors: SQL[] = [sql`1.0::float8`];
  if (boost.repo !== undefined) {
    factors.push(
      sql`(case when ${workspaceDocuments.repo} = ${boost.repo} then ${BOOST_FACTOR}::float8 else 1 end)`,
    );
  }
  if (boost.language !== undefined) {
    factors.push(
      sql`(case when ${workspaceDocuments.language} = ${boost.language} then ${BOOST_FACTOR}::float8 else 1 end)`,
    );
  }
  return sql.join(factors, sql` * `);
}

/**
 * The scope conditions, ANDed (docs/knowledge.md). `path`, `language` and `repo` are the document's columns (a
 * null repo is a missing key), `tag` tests membership in its tags whatever the operator's kind, and any other
 * key is looked up in its metadata, where a missing key is null. Values go in as one JSON array parameter.
 */
function scopeCondition(scope: readonly RagScopeCondition[]): SQL | undefined {
  return scope.length === 0 ? undefined : and(...scope.map(conditionSql));
}

function conditionSql(condition: RagScopeCondition): SQL {
  const values = sql`${JSON.stringify(condition.values)}::jsonb`;
  if (condition.key === "tag") {
    const member = sql`${workspaceDocuments.tags} ?| array(select jsonb_array_elements_text(${values}))`;
    return condition.operator === "==" || condition.operator === "contains" ? member : sql`not (${member})`;
  }
  const value = attributeOf(condition.key);
  const contains = sql`exists (select 1 from jsonb_array_elements_text(${values}) as part (value) where strpos(${value}, part.value) > 0)`;
  switch (condition.operator) {
    case "==":
      return sql`coalesce(${values} ? ${value}, false)`;
    case "!=":
      return sql`(${value} is null or not (${values} ? ${value}))`;
    case "contains":
      return sql`(${value} is not null and ${contains})`;
    case "does_not_contain":
      return sql`(${value} is null or not ${contains})`;
  }
}

function attributeOf(key: string): SQL {
  switch (key) {
    case "path":
      return sql`${workspaceDocuments.path}`;
    case "language":
      return sql`${workspaceDocuments.language}`;
    case "repo":
      return sql`${workspaceDocuments.repo}`;
    default:
      return sql`(${workspaceDocuments.metadata} ->> ${key})`;
  }
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
