/** One failing field of a request or response: `path` in JSON-path-like form (`inputArtifacts[0].relativePath`; `""` is the whole document). */
export interface FieldError {
  path: string;
  message: string;
}

export function formatFieldPath(path: readonly PropertyKey[]): string {
  let text = "";
  for (const segment of path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else text += text === "" ? String(segment) : `.${String(segment)}`;
  }
  return text;
}
