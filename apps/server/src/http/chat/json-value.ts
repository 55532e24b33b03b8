/** JSON text as a value; text that is not JSON stays the text, so a part always shows. */
export function jsonValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
