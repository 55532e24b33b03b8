import { RE2JS } from "re2js";

/**
 * The paths a tool's `glob` argument selects: `*` (any characters but `/`), `?` (one), `[…]` / `[!…]` (one of, or
 * none of, with ranges), `**` as a whole segment (any folders, none included) and `\` escaping the next character;
 * no braces, no extglobs, no negation. Dotfiles match (`**\/*.yml` finds `.github/workflows/ci.yml`), and a
 * glob without `/` matches the file name in any folder (`*.ts`), as in `.gitignore`. The glob becomes an RE2
 * expression run by re2js, which matches in time linear in the path: a backtracking engine takes seconds to
 * hours on `*a*a*a*b` against a long file name, and the model chooses the glob.
 */
export function globFilter(glob: string | null | undefined): (path: string) => boolean {
  if (glob === undefined || glob === null) return () => true;
  const expression = RE2JS.compile(globSource(glob));
  return (path) => expression.matches(path);
}

function globSource(glob: string): string {
  const segments = glob.split("/");
  let source = segments.length === 1 && segments[0] !== "**" ? "(?:.*/)?" : "";
  let slashBefore = false;
  for (const [index, segment] of segments.entries()) {
    if (segment === "**") {
      const last = index === segments.length - 1;
      if (last) source += slashBefore ? "(?:/.*)?" : ".*";
      else source += slashBefore ? "(?:/.*)?/" : "(?:.*/)?";
      slashBefore = false;
      continue;
    }
    source += (slashBefore ? "/" : "") + segmentSource(segment);
    slashBefore = true;
  }
  return source;
}

/** One segment of the glob (no `/` in it) as RE2 syntax. */
function segmentSource(segment: string): string {
  let source = "";
  for (let index = 0; index < segment.length; index++) {
    const char = segment.charAt(index);
    if (char === "\\" && index + 1 < segment.length) {
      index++;
      source += RE2JS.quote(segment.charAt(index));
    } else if (char === "*") {
      while (segment.charAt(index + 1) === "*") index++;
      source += "[^/]*";
    } else if (char === "?") {
      source += "[^/]";
    } else if (char === "[" && classEnd(segment, index) > 0) {
      const end = classEnd(segment, index);
      source += classSource(segment.slice(index + 1, end));
      index = end;
    } else {
      source += RE2JS.quote(char);
    }
  }
  return source;
}

/** The index of the `]` closing the class opened at `start` (a `]` first in the class is a member), or -1. */
function classEnd(segment: string, start: number): number {
  let index = start + 1;
  if (segment[index] === "!" || segment[index] === "^") index++;
  if (segment[index] === "]") index++;
  return segment.indexOf("]", index);
}

/** `[…]`'s members (without the brackets) as an RE2 class; a negated class never matches `/`. */
function classSource(members: string): string {
  const negated = members.startsWith("!") || members.startsWith("^");
  const chars = [...(negated ? members.slice(1) : members)];
  const escaped = chars
    .map((char, index) => {
      const range = char === "-" && index > 0 && index < chars.length - 1;
      return range || !/[\\\]^[-]/.test(char) ? char : `\\${char}`;
    })
    .join("");
  return negated ? `[^/${escaped}]` : `[${escaped}]`;
}
