#!/usr/bin/env bash
# `pnpm check:packages`: packs every published package (packages/* and apps/*, not private) exactly as `pnpm publish`
# would (workspace:* rewritten), then checks what npm would get. Run it after a build: the tarballs hold
# dist/. Offline: publint and attw read the tarball, and the require()/import() checks use the workspace's
# node_modules. Any problem in any package fails the run, after every package was checked.
#
#   1. the tarball ships README.md and LICENSE, and the package's LICENSE is the root LICENSE (committed copies);
#   2. publint --strict (warnings fail too);
#   3. attw (@arethetypeswrong/cli) on the tarball. The packages are ESM only, and Node >= 20.19 (their
#      `engines`) can require() an ES module without top-level await, so attw's `cjs-resolves-to-esm` rule
#      ("a require call resolved to an ESM file") describes what is intended; that one rule is ignored. Any
#      other rule (node10 resolution, types, named exports, ...) fails the run;
#   4. every non-wildcard subpath of `exports` loads through the package's own exports map (self-reference,
#      without the @aptix/source condition, so from dist/) with both require() and import();
#   5. every `bin` is in the tarball, starts with a `#!/usr/bin/env node` line, and runs `--help` to exit 0.
#
# A package with only a bin (@aptix/cli) has no `exports` and no types: attw then finds nothing to resolve
# and says so ("This package does not contain types"), which passes; step 4 has nothing to load.
set -uo pipefail
exec 2>&1 # one stream, so each failure shows under its package in the CI log
cd "$(dirname "$0")/.."
root="$PWD"
bin="$root/node_modules/.bin"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

failed=()
for dir in packages/*/ apps/*/; do
  dir="${dir%/}"
  [[ -f "$dir/package.json" ]] || continue
  name="$(node -p "require('./$dir/package.json').name")"
  if [[ "$(node -p "require('./$dir/package.json').private === true")" == true ]]; then
    continue
  fi
  printf '\n==> %s (%s)\n' "$name" "$dir"
  ok=true

  if [[ ! -d "$dir/dist" ]]; then
    echo "FAIL: $dir/dist is missing: build first (pnpm --filter \"$name\" build)"
    failed+=("$name (not built)")
    continue
  fi
  if ! cmp -s LICENSE "$dir/LICENSE"; then
    echo "FAIL: $dir/LICENSE differs from the root LICENSE (or is missing): cp LICENSE $dir/LICENSE"
    ok=false
  fi

  dest="$out/$(basename "$dir")"
  mkdir -p "$dest"
  if ! (cd "$dir" && pnpm pack --pack-destination "$dest" >"$dest.log" 2>&1); then
    cat "$dest.log"
    failed+=("$name (pack)")
    continue
  fi
  tarball="$(ls "$dest"/*.tgz)"
  contents="$(tar tzf "$tarball")"
  echo "packed $(basename "$tarball"): $(wc -l <<<"$contents") files"
  for file in README.md LICENSE; do
    if ! grep -qx "package/$file" <<<"$contents"; then
      echo "FAIL: the tarball has no $file"
      ok=false
    fi
  done

  echo "-- publint"
  "$bin/publint" run --strict "$tarball" || ok=false

  echo "-- attw"
  # cjs-resolves-to-esm is ignored on purpose: see the header (ESM only; Node >= 20.19 require()s ESM).
  "$bin/attw" "$tarball" --ignore-rules cjs-resolves-to-esm --no-color || ok=false

  echo "-- require() and import() of each export"
  subpaths="$(node -p "Object.keys(require('./$dir/package.json').exports ?? {}).filter((s) => !s.includes('*')).join(' ')")"
  for subpath in $subpaths; do
    spec="$name${subpath#.}"
    attributes="{}"
    [[ "$spec" == *.json ]] && attributes='{ with: { type: "json" } }'
    # Self-reference from the package directory: Node resolves the name through the package's own exports.
    if (cd "$dir" && node -e "require('$spec')" &&
      node --input-type=module -e "await import('$spec', $attributes)"); then
      echo "ok   $spec"
    else
      echo "FAIL $spec"
      ok=false
    fi
  done

  bins="$(node -p "const { bin } = require('./$dir/package.json'); Object.values(typeof bin === 'string' ? { bin } : (bin ?? {})).join(' ')")"
  if [[ -n "$bins" ]]; then
    echo "-- bin"
    for file in $bins; do
      file="${file#./}"
      if grep -qx "package/$file" <<<"$contents" &&
        [[ "$(head -n 1 "$dir/$file")" == "#!/usr/bin/env node" ]] &&
        (cd "$dir" && node "$file" --help >/dev/null); then
        echo "ok   $file"
      else
        echo "FAIL $file (in the tarball, a node shebang, and --help exiting 0)"
        ok=false
      fi
    done
  fi

  [[ "$ok" == true ]] || failed+=("$name")
done

echo
if ((${#failed[@]} > 0)); then
  printf 'check:packages failed for: %s\n' "${failed[*]}"
  exit 1
fi
echo "check:packages: every published package passed publint, attw, the require()/import() and the bin checks"
