/** What no store column keeps: U+0000, and a surrogate that is not half of a pair. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding NUL is the point.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, "g");

/**
 * `value` with every code point a store column refuses, in any string of it (keys too), replaced by U+FFFD.
 * Provider output is data the service did not write: a model may answer a NUL or half of an emoji, and kept as it
 * came it would fail the write of its turn (and of every turn sharing the statement). What holds nothing to replace
 * is answered as it is, the same object, so a clean answer costs a walk and no copy.
 */
export function storable<T>(value: T): T {
  if (typeof value === "string") {
    return (UNSTORABLE.test(value) ? value.replace(UNSTORABLE_ALL, "\uFFFD") : value) as T;
  }
  if (Array.isArray(value)) {
    const items = value.map(storable);
    return (items.some((item, index) => item !== value[index]) ? items : value) as T;
  }
  if (typeof value !== "object" || value === null) return value;
  // Plain data only (what JSON gives): an instance of a class is left as it is.
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  const entries = Object.entries(value);
  const kept = entries.map(([key, entry]) => [storable(key), storable(entry)] as const);
  return (
    kept.some(([key, entry], index) => key !== entries[index]?.[0] || entry !== entries[index]?.[1])
      ? Object.fromEntries(kept)
      : value
  ) as T;
}
