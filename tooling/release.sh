#!/usr/bin/env bash
# `pnpm release`: publishes the published packages (not private) at the versions `pnpm changeset version` gave
# them, from a clean checkout of what was committed. `pnpm release --dry-run` does everything but the upload:
# CI runs it, so a release cannot fail on something a commit broke.
#
#   1. refuses pending changesets (a real release publishes versioned packages only) and a dirty work tree;
#   2. builds every package, then `check:packages` (publint, attw, require/import of every export, the bins);
#   3. `changeset publish`: `pnpm publish` for each package whose version is not on the registry yet, with
#      workspace:* ranges rewritten to the versions, and a git tag per package (push them: `git push --tags`).
#      A dry run packs every package and goes through `pnpm publish --dry-run` (changeset publish has no dry run);
#   4. `changeset tag`: the tags of versions published before and never tagged.
set -euo pipefail
cd "$(dirname "$0")/.."

dry_run=""
case "${1:-}" in
  --dry-run) dry_run=1 ;;
  "") ;;
  *) echo "usage: pnpm release [--dry-run]" >&2; exit 2 ;;
esac

pending="$(find .changeset -name '*.md' ! -name README.md | wc -l)"
if [[ -z "$dry_run" ]]; then
  if [[ "$pending" -gt 0 ]]; then
    echo "release: $pending changesets are pending: run 'pnpm changeset version', review and commit, then release." >&2
    exit 1
  fi
  if [[ -n "$(git status --porcelain)" ]]; then
    echo "release: the work tree has uncommitted changes; a release publishes what was committed." >&2
    exit 1
  fi
fi

pnpm build
pnpm check:packages

if [[ -n "$dry_run" ]]; then
  # What the next `pnpm changeset version` would bump (the pending changesets), then the packing and publish
  # steps without the upload.
  pnpm changeset status
  # npm lists every file of every tarball; the per-package summary (name, version, size, file count) is kept.
  pnpm -r publish --dry-run --no-git-checks --access public 2>&1 | grep -v '^npm notice [0-9.]*[kM]\?B '
else
  pnpm changeset publish
  # A tag per published package at its version (`@aptix/core@1.2.0`), those already on the registry included:
  # `changeset publish` tags only what it uploaded, and a release is found by its tags.
  pnpm changeset tag
  echo "release: published and tagged; push the tags with: git push --follow-tags"
fi
