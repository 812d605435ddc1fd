#!/usr/bin/env bash
# Prints the routing view's function library as FUNCTION LOAD takes it: the contract's Lua head
# (generated from view-contract/src/main/resources/kvr-view.yaml) and the stage files of
# view-contract/src/main/lua/kvrouter/ joined in name order, as the build joins them — of the working
# copy, or of a git revision (one from before the split: its single kvrouter.lua).
#
#   scripts/library.sh > kvrouter.lua
#   scripts/library.sh 2f817f6 > kvrouter-2f817f6.lua
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tree="$ROOT"
out="$(mktemp)"
if [ -n "${1:-}" ]; then
  tree="$(mktemp -d)"
  trap 'rm -rf "$tree" "$out"' EXIT
  git -C "$ROOT" archive "$1" view-contract/src | tar -x -C "$tree"
else
  trap 'rm -f "$out"' EXIT
fi
if [ -d "$tree/view-contract/src/main/lua/kvrouter" ]; then
  java "$tree/view-contract/src/build/GenerateViewContract.java" "$tree/view-contract/src/main/resources/kvr-view.yaml" \
    library "$tree/view-contract/src/main/lua/kvrouter" "$out"
  cat "$out"
else
  cat "$tree/view-contract/src/main/resources/dev/kvrouter/contract/kvrouter.lua"
fi
