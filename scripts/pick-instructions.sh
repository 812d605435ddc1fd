#!/usr/bin/env bash
# The pick's work inside Redis counted in instructions, which a busy box does not move: a private
# Redis run under valgrind's callgrind, the profile's picks (scripts/pick-profile.lua: the view
# `./kvr bench pick` makes, 16 engines) made by each library in turn, and the instructions Redis
# executed per pick, a run of no picks subtracted (the dones the profile sends, one a pick, included).
# Libraries are git revisions (scripts/library.sh prints each) or files, interleaved A B A B:
#
#   scripts/pick-instructions.sh 2f817f6 HEAD
#   ROUNDS=3 PICKS=300 BLOCKS="64 2048" scripts/pick-instructions.sh a.lua b.lua
#
# Needs valgrind (Debian: apt-get install valgrind) and redis-server. Under callgrind Redis runs ~50x
# slower: a round of 300 picks takes seconds. It starts and stops its own Redis, on a free loopback port.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PICKS="${PICKS:-300}"
ROUNDS="${ROUNDS:-2}"
BLOCKS="${BLOCKS:-64}"
[ $# -ge 1 ] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
for tool in valgrind callgrind_control redis-server redis-cli; do
  command -v "$tool" >/dev/null || { echo "pick-instructions: $tool is not installed (Debian: apt-get install valgrind redis-server)" >&2; exit 2; }
done
work="$(mktemp -d)"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
  >"$work/valgrind.log" 2>&1 &
pid=$!
stop() { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"; }
trap stop EXIT
for _ in $(seq 100); do redis-cli -p "$port" PING >/dev/null 2>&1 && break; sleep 0.2; done
export REDIS_URL="redis://127.0.0.1:$port"
. "$ROOT/scripts/library-eval.sh"
trap 'eval_cleanup; stop' EXIT

# Each library's body with the profile after it, untimed.
scripts=()
for lib in "$@"; do
  file="$work/$(basename "$lib").lua"
  if [ -f "$lib" ]; then cp "$lib" "$file.src"; else "$ROOT/scripts/library.sh" "$lib" >"$file.src"; fi
  { library_body "$file.src"; cat "$ROOT/scripts/pick-profile.lua"; } >"$file"
  scripts+=("$file")
done
# Callgrind takes a command when Redis next runs code (its cron: ten times a second), so each dump is
# waited for: the newest dump's number, and a dump that has landed.
newest() { ls "$work" | sed -n 's/^cg\.out\.\([0-9]*\)$/\1/p' | sort -n | tail -1; }
dumped() {
  local before after
  before="$(newest)"
  callgrind_control -d "$pid" >/dev/null 2>&1
  for _ in $(seq 100); do
    after="$(newest)"
    [ "${after:-0}" != "${before:-0}" ] && break
    sleep 0.1
  done
  echo "$after"
}
# The instructions Redis executes during one EVAL of `script` with `picks` picks: between two dumps.
# Each EVAL under a prefix of its own, `4` (another library's keys are no state of this one's).
counted() {
  dumped >/dev/null
  run_eval "$1" "$2" "$3" "$EVAL_PREFIX$4:" pick untimed >/dev/null
  grep '^summary:' "$work/cg.out.$(dumped)" | awk '{print $2}'
}
for round in $(seq "$ROUNDS"); do
  for blocks in $BLOCKS; do
    for i in "${!scripts[@]}"; do
      none="$(counted "${scripts[$i]}" 0 "$blocks" "$round-$blocks-$i-none")"
      all="$(counted "${scripts[$i]}" "$PICKS" "$blocks" "$round-$blocks-$i")"
      printf '%-12s %5d blocks, round %d: %9d instructions a pick\n' "${@:$((i + 1)):1}" "$blocks" "$round" $(((all - none) / PICKS))
    done
  done
done
