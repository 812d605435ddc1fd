#!/usr/bin/env bash
# Checks that a change to the routing view's function library keeps its answers: two versions run
# side by side on random views, reservation histories and calls (kvr_pick reserving and not,
# kvr_place, kvr_done), each call from the same state under the same clock, their answers and every
# key they leave compared (scripts/pick-diff.lua). Prints the number of calls compared, or the first
# difference (the case, the call, the answer or key that differs). Reasons are compared by family
# (kvr-view.yaml: SPILL_QUEUE as SPILL_BUSY, BURST_COPY as SPILL_HOT), so a library that refines a
# reason compares equal to one that gave its family; EXACT_REASONS=1 compares them as answered.
#
#   . <(./kvr stack env)                                   # a running stack (or any REDIS_URL without a password)
#   scripts/pick-diff.sh <git revision>                   # that revision's library against the working copy's
#   CASES=5000 SEEDS="1 2 3" scripts/pick-diff.sh HEAD~1
#   OTHER=/path/to/kvrouter.lua scripts/pick-diff.sh      # a file instead of a revision
#   COUNT=1 scripts/pick-diff.sh <git revision>           # a deliberate change: every call compared, the
#                                                         # differing ones counted by what changed
#
# Its keys (a fresh prefix) are deleted when it ends; it blocks Redis for the whole EVAL (seconds):
# never against a Redis that serves anything else.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CASES="${CASES:-2000}"
SEEDS="${SEEDS:-1}"
. "$ROOT/scripts/library-eval.sh"
other="$(mktemp)"
mine="$(mktemp)"
script="$(mktemp)"
EVAL_TEMP_FILES+=("$other" "$mine" "$script")
if [ -n "${OTHER:-}" ]; then
  cp "$OTHER" "$other"
else
  "$ROOT/scripts/library.sh" "${1:?a git revision to compare the working copy with, or OTHER=file}" >"$other"
fi
"$ROOT/scripts/library.sh" >"$mine"
# Each library's body (without #!lua and its registrations) as a function, its clock the test's.
wrap() {
  echo "local function $1()"
  library_body "$2"
  echo "now_ms = function() return CLOCK.now end"
  echo "return {pick = pick_with, place = place, done = done, to36 = to36}"
  echo "end"
}
# The contract's refined reasons and their families, as a Lua table (empty with EXACT_REASONS=1).
families() {
  echo "local FAMILY = {"
  if [ -z "${EXACT_REASONS:-}" ]; then
    awk '/^reasons:/ {in_reasons = 1; next} /^[a-z_]+:/ {in_reasons = 0}
         in_reasons && /^  - name: / {name = $3} in_reasons && /^    family: / {print "  " name " = \"" $2 "\","}' \
      "$ROOT/view-contract/src/main/resources/kvr-view.yaml"
  fi
  echo "}"
}
{
  echo "local CLOCK = {now = 0}"
  if [ -n "${COUNT:-}" ]; then echo "local COUNT = true"; else echo "local COUNT = false"; fi
  families
  wrap library_a "$other"
  wrap library_b "$mine"
  cat "$ROOT/scripts/pick-diff.lua"
} >"$script"
for seed in $SEEDS; do
  run_eval "$script" "$CASES" "$seed" "$EVAL_PREFIX"
done
