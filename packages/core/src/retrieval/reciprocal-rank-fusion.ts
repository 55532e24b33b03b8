/** The constant of reciprocal rank fusion (Cormack et al., 2009): it damps the weight of the very first ranks. */
const RRF_K = 60;

/**
 * Fuses rankings of the same items, each best first: an item scores the sum of `1 / (k + rank)` over the
 * rankings it appears in (rank 1-based), so one found high by both beats one found first by only one. Best
 * first; ties keep the order of first appearance.
 */
export function reciprocalRankFusion<T>(
  rankings: readonly (readonly T[])[],
  idOf: (item: T) => string,
  k = RRF_K,
): { item: T; score: number }[] {
  const fused = new Map<string, { item: T; score: number }>();
  for (const ranking of rankings) {
    ranking.forEach((item, index) => {
      const id = idOf(item);
      const entry = fused.get(id) ?? { item, score: 0 };
      entry.score += 1 / (k + index + 1);
      fused.set(id, entry);
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score);
}
