/** Edits (insert, delete, replace, swap neighbours) turning `a` into `b`, case ignored. */
function distance(a: string, b: string): number {
  const [x, y] = [a.toLowerCase(), b.toLowerCase()];
  const rows = Array.from({ length: x.length + 1 }, (_, i) =>
    Array.from({ length: y.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      const row = rows[i] as number[];
      const above = rows[i - 1] as number[];
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      row[j] = Math.min(
        (above[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (above[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) {
        row[j] = Math.min(row[j] as number, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      }
    }
  }
  return (rows[x.length] as number[])[y.length] as number;
}

/**
 * ` (did you mean "bootPrompt"?)` for a name close to one of `names` (a typo: at most a third of its letters off),
 * else nothing.
 */
export function didYouMean(names: readonly string[]): (unknown: string) => string {
  return (unknown) => {
    let best: { name: string; edits: number } | undefined;
    for (const name of names) {
      const edits = distance(unknown, name);
      if (!best || edits < best.edits) best = { name, edits };
    }
    return best && best.edits <= Math.max(1, Math.floor(unknown.length / 3))
      ? ` (did you mean ${JSON.stringify(best.name)}?)`
      : "";
  };
}
