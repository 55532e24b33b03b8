const LANGUAGE_BY_EXTENSION: Readonly<Record<string, string>> = {
  ts: "typescript",
  tsx: "typescript",
  js: "javascript",
  jsx: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  py: "python",
  cs: "csharp",
  java: "java",
  go: "go",
  rs: "rust",
  rb: "ruby",
  md: "markdown",
  json: "json",
  yaml: "yaml",
  yml: "yaml",
  sql: "sql",
  sh: "bash",
  html: "html",
  css: "css",
};

/**
 * The language of a document: the one the request names (`given`, trimmed and lower-cased) or else the one its
 * file extension implies (case-insensitive); `text` when neither says. A dotfile such as `.env` has no extension.
 */
export function languageOf(path: string, given?: string): string {
  const named = given?.trim().toLowerCase();
  if (named) return named;
  const name = path.slice(Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\")) + 1);
  const dot = name.lastIndexOf(".");
  if (dot <= 0) return "text";
  return LANGUAGE_BY_EXTENSION[name.slice(dot + 1).toLowerCase()] ?? "text";
}
