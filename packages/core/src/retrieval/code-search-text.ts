/**
 * Code-aware terms for lexical search (docs/knowledge.md). Source text is cut into words of letters, marks and
 * digits; an identifier is also split into its parts on `_` and case changes (`getUserName` → `get`, `user`,
 * `name`), and one with several parts is kept whole too, without its underscores (`getusername`), so a query
 * naming it exactly matches more terms than one naming a part. Terms are lower-case and made only of letters,
 * marks and digits, so Postgres's default parser reads each as one word and the `simple` configuration keeps
 * it as it is: the database and these functions agree on what a term is.
 */

/** Runs of letters, marks, digits and underscores: identifiers and words; anything else separates them. */
const IDENTIFIER = /[\p{L}\p{M}\p{N}_]+/gu;

/**
 * Case changes inside an identifier: `userName` → `user|Name`, `HTTPServer` → `HTTP|Server`, `v2Api` → `v2|Api`.
 * Letters and digits stay together otherwise (`sha256`, `utf8`).
 */
const CASE_BOUNDARY = /(?<=\p{Ll})(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})|(?<=\p{N})(?=\p{Lu})/u;

/**
 * Longer terms are not kept: they are data (hashes, base64) rather than names, and Postgres refuses to index
 * words over 2,047 bytes anyway.
 */
const MAX_TERM_CHARS = 64;

/** Words a question is made of rather than what it asks about; never code identifiers such as `get` or `new`. */
const QUERY_STOP_WORDS: ReadonlySet<string> = new Set([
  "a",
  "about",
  "an",
  "and",
  "any",
  "are",
  "as",
  "at",
  "be",
  "by",
  "can",
  "could",
  "do",
  "does",
  "did",
  "for",
  "from",
  "how",
  "i",
  "if",
  "in",
  "into",
  "is",
  "it",
  "its",
  "me",
  "my",
  "of",
  "on",
  "or",
  "our",
  "should",
  "so",
  "the",
  "their",
  "there",
  "these",
  "this",
  "those",
  "to",
  "was",
  "we",
  "were",
  "what",
  "when",
  "where",
  "which",
  "who",
  "why",
  "with",
  "would",
  "you",
  "your",
]);

/** The terms of one identifier, in order: the whole (when it has several parts), then each part. */
function identifierTerms(identifier: string): string[] {
  const parts = identifier
    .split("_")
    .flatMap((segment) => segment.split(CASE_BOUNDARY))
    .filter((part) => part !== "")
    .map((part) => part.toLowerCase());
  const terms = parts.length > 1 ? [parts.join(""), ...parts] : parts;
  return terms.filter((term) => term.length <= MAX_TERM_CHARS);
}

function allTerms(text: string): string[] {
  return Array.from(text.matchAll(IDENTIFIER), (match) => identifierTerms(match[0])).flat();
}

/**
 * The text the lexical index matches for `text`: its terms (see the module comment) in order, separated by
 * spaces. `codeSearchText("foo_bar.baz/getUserName")` is `"foobar foo bar baz getusername get user name"`.
 */
export function codeSearchText(text: string): string {
  return allTerms(text).join(" ");
}

/**
 * The distinct terms of a query, natural language or code, split as `codeSearchText` splits text, in order of
 * first appearance; single characters and common English words of a question ("how", "the", "does") are
 * dropped. Empty when nothing is left to search for.
 */
export function codeQueryTerms(query: string): string[] {
  const terms = allTerms(query).filter((term) => term.length > 1 && !QUERY_STOP_WORDS.has(term));
  return [...new Set(terms)];
}
