/** The rows of a `db.execute` result: postgres.js answers them as an array, PGlite as `{ rows }`. */
export function rowsOf(result: unknown): Record<string, unknown>[] {
  return (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as Record<string, unknown>[];
}
