/** True when `text` is a complete JSON document (`resultJson`, `argumentsJson` are JSON carried as text). */
export function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** True when `text` is JSON for an object: tool arguments are always objects. */
export function isJsonObjectText(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}
