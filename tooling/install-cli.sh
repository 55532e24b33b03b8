#!/usr/bin/env bash
# `pnpm install:cli`: installs a global `aptix` from this checkout, into npm's global prefix (`npm prefix -g`;
# set npm_config_prefix for another), until the packages are on a registry.
#
#   1. builds the CLI and the packages it runs on (@aptix/client, @aptix/contracts);
#   2. `pnpm deploy`s it with its production dependencies, the workspace ones included as built, into
#      <prefix>/lib/aptix-cli (replacing an earlier install);
#   3. `npm install -g` of that directory (its manifest stripped of the dependencies it already holds): npm links
#      it as @aptix/cli and puts `aptix` on <prefix>/bin.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix="$(npm prefix -g)"
target="$prefix/lib/aptix-cli"

pnpm exec turbo run build --filter=@aptix/cli --filter=@aptix/client --filter=@aptix/contracts \
  --output-logs=errors-only
rm -rf "$target"
mkdir -p "$prefix/lib"
pnpm --filter @aptix/cli deploy --legacy --prod --prefer-offline "$target" >/dev/null
# Its dependencies are in place already: npm is told of none, or it would look for workspace:* on the registry.
node -e 'const fs = require("node:fs"); const file = process.argv[1]; const manifest = JSON.parse(fs.readFileSync(file, "utf8"));
delete manifest.dependencies; delete manifest.devDependencies; fs.writeFileSync(file, JSON.stringify(manifest, null, 2));' \
  "$target/package.json"
npm install --global --no-audit --no-fund "$target" >/dev/null
echo "install:cli: installed aptix as $prefix/bin/aptix (from $target)"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "install:cli: $prefix/bin is not on your PATH: add it to run aptix" ;;
esac
