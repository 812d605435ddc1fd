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
#   COMMANDS=1 scripts/pick-profile.sh         # also the Redis commands a pick runs: calls and their own
#                                              # time per pick by command (INFO commandstats; CONFIG RESETSTAT
#                                              # first: a Redis of its own), a run of no picks subtracted
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
cli() { redis-cli -h "$eval_host" -p "$eval_port" "$@"; }
# INFO commandstats as "command calls usec" lines, the EVAL itself left out.
command_stats() {
  cli INFO commandstats | tr -d '\r' | sed -n 's/^cmdstat_\([^:]*\):calls=\([0-9]*\),usec=\([0-9]*\),.*/\1 \2 \3/p' \
    | grep -v -E '^(eval|evalsha|script|config|info) '
}
for round in $(seq "$ROUNDS"); do
  for blocks in $BLOCKS; do
    echo "== $blocks blocks, $MODE, round $round: us per pick"
    if [ -n "${COMMANDS:-}" ]; then
      cli CONFIG RESETSTAT >/dev/null
      run_eval "$script" 0 "$blocks" "$EVAL_PREFIX" "$MODE" >/dev/null
      none="$(command_stats)"
      cli CONFIG RESETSTAT >/dev/null
    fi
    run_eval "$script" "$PICKS" "$blocks" "$EVAL_PREFIX" "$MODE"
    if [ -n "${COMMANDS:-}" ]; then
      echo "-- Redis commands a pick (the profile's own TIMEs included: ~2 a timed part): calls, us of their own time"
      command_stats | awk -v picks="$PICKS" -v none="$none" '
        BEGIN { n = split(none, l, "\n"); for (i = 1; i <= n; i++) { split(l[i], f, " "); c0[f[1]] = f[2]; u0[f[1]] = f[3] } }
        { c = ($2 - c0[$1]) / picks; u = ($3 - u0[$1]) / picks; calls += c; usec += u
          if (c > 0.005) printf "%-18s %6.2f %8.1f\n", $1, c, u }
        END { printf "%-18s %6.2f %8.1f\n", "all", calls, usec }' | sort -k3 -n -r
    fi
  done
done
