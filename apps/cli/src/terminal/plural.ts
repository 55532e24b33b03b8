/** `count` and its noun, singular for one: "1 turn", "2 turns", "0 files". */
export function plural(count: number, noun: string, nouns = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : nouns}`;
}
