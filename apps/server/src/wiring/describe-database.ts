/** DATABASE_URL as a log line may show it: a Postgres URL without its credentials, or the embedded database. */
export function describeDatabase(url: string): string {
  if (/^postgres(ql)?:\/\//.test(url)) return url.replace(/\/\/([^@/]*)@/, "//***@");
  return url === "memory://" ? "embedded PGlite in memory" : `embedded PGlite at ${url}`;
}
