import picomatch from "picomatch";

/**
 * The paths a tool's `glob` argument selects. picomatch is the matcher behind micromatch, fast-glob and
 * chokidar: bash-like globs (`**`, braces, extglobs) compiled to a safe regular expression, no file system
 * access. Dotfiles match (`**\/*.yml` finds `.github/workflows/ci.yml`), and a glob without `/` matches the
 * file name anywhere (`*.ts`), as in `.gitignore`.
 */
export function globFilter(glob: string | null | undefined): (path: string) => boolean {
  if (glob === undefined || glob === null) return () => true;
  return picomatch(glob, { dot: true, basename: !glob.includes("/") });
}
