import type { DestinationStream } from "pino";

/** The longest log line, in bytes: a shipper's limit (Docker's is 16 KiB), whatever a request carried. */
export const MAX_LOG_LINE_BYTES = 8 * 1024;

const MAX_STRING_CHARS = 256;
const MAX_ENTRIES = 20;
const MAX_DEPTH = 6;
/** What the last resort keeps of each top-level text: a request id, a path, a principal. */
const MAX_SCALAR_CHARS = 64;

const clipText = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max)}…`);

/** `value` with long strings cut, lists and objects shortened (saying how much was left), deep values elided. */
function clipped(value: unknown, depth: number): unknown {
  if (typeof value === "string") return clipText(value, MAX_STRING_CHARS);
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_DEPTH) return "…";
  if (Array.isArray(value)) {
    const kept = value.slice(0, MAX_ENTRIES).map((entry) => clipped(entry, depth + 1));
    return value.length > MAX_ENTRIES ? [...kept, `… and ${value.length - MAX_ENTRIES} more`] : kept;
  }
  const entries = Object.entries(value);
  const kept = entries
    .slice(0, MAX_ENTRIES)
    .map(([key, entry]) => [clipText(key, MAX_STRING_CHARS), clipped(entry, depth + 1)]);
  if (entries.length > MAX_ENTRIES) kept.push(["…", `${entries.length - MAX_ENTRIES} more`]);
  return Object.fromEntries(kept);
}

const fits = (line: string) =>
  line.length * 3 <= MAX_LOG_LINE_BYTES || Buffer.byteLength(line) <= MAX_LOG_LINE_BYTES;

/** The entry's top-level numbers, booleans and short texts: what finds a request again (id, status, path). */
function scalarsOf(entry: Record<string, unknown>): Record<string, unknown> {
  const kept = Object.entries(entry)
    .filter(([, value]) => typeof value !== "object" || value === null)
    .slice(0, MAX_ENTRIES)
    .map(([key, value]) => [
      clipText(key, MAX_SCALAR_CHARS),
      typeof value === "string" ? clipText(value, MAX_SCALAR_CHARS) : value,
    ]);
  return Object.fromEntries(kept);
}

/**
 * `entry` as one line of JSON of at most MAX_LOG_LINE_BYTES. A longer one is written with `"truncated": true`
 * and its strings, lists and objects shortened; if that is still too long, with its top-level scalars only; and
 * as a last resort with its time, level and message only.
 */
function boundedLogLine(entry: { time: string; level: string; message: string }): string {
  const whole = JSON.stringify(entry);
  if (fits(whole)) return whole;
  for (const shortened of [clipped(entry, 0) as object, scalarsOf(entry)]) {
    const line = JSON.stringify({ ...shortened, truncated: true });
    if (fits(line)) return line;
  }
  const { time, level, message } = entry;
  return JSON.stringify({ time, level, message: clipText(message, MAX_SCALAR_CHARS), truncated: true });
}

/**
 * `destination` with every line bounded to MAX_LOG_LINE_BYTES (see boundedLogLine): pino writes what a request
 * carried whole, and a line past a shipper's limit is split or dropped. A line that fits is passed on as it is.
 */
export function boundedLines(destination: DestinationStream): DestinationStream {
  return {
    write(line: string) {
      if (fits(line)) destination.write(line);
      else destination.write(`${boundedLogLine(JSON.parse(line))}\n`);
    },
  };
}
