#!/usr/bin/env bash
# Where a kvr_pick's time goes inside Redis: the routing view's function library run as one EVAL
# with its parts timed (scripts/pick-profile.lua), on the view `./kvr bench pick` makes. Microseconds
# per pick of Redis's own time, no client or network; each timed part includes ~2 us of its own
# timing (two TIME calls), the whole pick ~10. For comparing two versions of the library, interleaved:
#
#   . <(./kvr stack env)                       # a running stack (or any REDIS_URL without a password)
#   scripts/pick-profile.sh                    # 64 blocks, 3 000 picks, 3 rounds
#   BLOCKS="8 2048" ROUNDS=2 scripts/pick-profile.sh
#   LIBRARY=/path/to/kvrouter.lua scripts/pick-profile.sh    # another version of the library (scripts/library.sh REV prints one)
#   MODE=peek scripts/pick-profile.sh          # kvr_peek: nothing reserved
#
# Its keys (a fresh prefix) are deleted when it ends; it blocks Redis for the whole EVAL (seconds):
# never against a Redis that serves anything else.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BLOCKS="${BLOCKS:-64}"
PICKS="${PICKS:-3000}"
ROUNDS="${ROUNDS:-3}"
MODE="${MODE:-pick}"
. "$ROOT/scripts/library-eval.sh"
script="$(mktemp)"
library="$(mktemp)"
EVAL_TEMP_FILES+=("$script" "$library")
if [ -n "${LIBRARY:-}" ]; then cp "$LIBRARY" "$library"; else "$ROOT/scripts/library.sh" >"$library"; fi
library_body "$library" >"$script"
cat "$ROOT/scripts/pick-profile.lua" >>"$script"
for round in $(seq "$ROUNDS"); do
  for blocks in $BLOCKS; do
    echo "== $blocks blocks, $MODE, round $round: us per pick"
    run_eval "$script" "$PICKS" "$blocks" "$EVAL_PREFIX" "$MODE"
  done
done
