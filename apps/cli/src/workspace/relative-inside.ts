import { isAbsolute, relative, sep } from "node:path";

/** `path` relative to `folder` (both absolute) when it lies inside it (`""`: the folder itself); else `undefined`. */
export function relativeInside(folder: string, path: string): string | undefined {
  const inside = relative(folder, path);
  if (inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside)) return undefined;
  return inside;
}
