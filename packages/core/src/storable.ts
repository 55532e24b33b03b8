/** Where an unstorable code point may be: U+0000, or any surrogate (most are halves of a pair, and kept). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding NUL is the point.
const SUSPECT = /[\u0000\uD800-\uDFFF]/g;

/** ES2024's `String.prototype.isWellFormed`, which Node has (the repository's `lib` is ES2023). */
interface WellFormedText {
  isWellFormed(): boolean;
}

/**
 * `text` with U+0000 and every surrogate that is not half of a pair replaced by U+FFFD: the same string when
 * there is none. It visits only the suspects, not every character (docs/turn-cost.md).
 */
function repaired(text: string): string {
  // Most text answers here at once: V8 knows a string of one-byte characters holds no surrogate.
  if (text.indexOf("\u0000") === -1 && (text as unknown as WellFormedText).isWellFormed()) return text;
  let kept = "";
  let from = 0;
  SUSPECT.lastIndex = 0;
  for (let found = SUSPECT.exec(text); found !== null; found = SUSPECT.exec(text)) {
    const at = found.index;
    const code = text.charCodeAt(at);
    const next = text.charCodeAt(at + 1);
    // A high half followed by a low one is a character: skip both. A low half met here has no high one.
    if (code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      SUSPECT.lastIndex = at + 2;
      continue;
    }
    kept += `${text.slice(from, at)}\uFFFD`;
    from = at + 1;
  }
  return from === 0 ? text : kept + text.slice(from);
}

/**
 * `value` with every code point a store column refuses, in any string of it (keys too), replaced by U+FFFD.
 * Provider output is data the service did not write: a model may answer a NUL or half of an emoji, and kept as it
 * came it would fail the write of its turn (and of every turn sharing the statement). What holds nothing to replace
 * is answered as it is, the same object, so a clean answer costs a walk and no copy.
 */
export function storable<T>(value: T): T {
  if (typeof value === "string") return repaired(value) as T;
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    let items: unknown[] | undefined;
    for (const [index, item] of value.entries()) {
      const kept = storable(item);
      if (kept !== item) items ??= [...value];
      if (items) items[index] = kept;
    }
    return (items ?? value) as T;
  }
  // Plain data only (what JSON gives): an instance of a class is left as it is.
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  // Copied only once something changed, and then with `fromEntries`, which a `__proto__` key cannot trick.
  let entries: Array<[string, unknown]> | undefined;
  const keys = Object.keys(value);
  for (const [index, key] of keys.entries()) {
    const entry = (value as Record<string, unknown>)[key];
    const keptKey = repaired(key);
    const kept = storable(entry);
    if (entries === undefined && (keptKey !== key || kept !== entry)) {
      entries = keys.slice(0, index).map((earlier) => [earlier, (value as Record<string, unknown>)[earlier]]);
    }
    entries?.push([keptKey, kept]);
  }
  return (entries ? Object.fromEntries(entries) : value) as T;
}
