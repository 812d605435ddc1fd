#!/usr/bin/env bash
# The Mooncake conversation trace with the view in the loop, at 1 and at 4 balancers: the README's
# command ("The Mooncake trace with the view in the loop"), once per balancer count, each under
# fresh topic and key prefixes, with the job stopped when its replay is done. The other policies run
# in memory beside the view (the same figures in every run).
#
#   scripts/mooncake-view.sh [OUT_DIR]
#   BALANCERS="4" scripts/mooncake-view.sh
#   REPLAY_ARGS="--view-hold 0ms --no-report-slots" scripts/mooncake-view.sh   # extra 'kvr replay' options (here: no holding)
#   REPEATS=5 scripts/mooncake-view.sh   # each balancer count five times: the spread between runs
#   JOB_ARGS="-D cost.uncached-prefill-weight=2" scripts/mooncake-view.sh   # job options over the script's
#
# About 14 minutes per run (12 of them the trace paced to wall time).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/.kvr/mooncake/$(date +%Y%m%d-%H%M%S)}"
BALANCERS="${BALANCERS:-1 4}"
REPLAY_ARGS="${REPLAY_ARGS:-}"
JOB_ARGS="${JOB_ARGS:-}"
REPEATS="${REPEATS:-1}"
TRACE="${TRACE:-$ROOT/simulator/src/test/resources/traces/mooncake-conversation.jsonl.gz}"
mkdir -p "$OUT"

. "$ROOT/scripts/stack-for-runs.sh"
job_pid=""
cleanup() {
  if [ -n "$job_pid" ] && kill -0 "$job_pid" 2>/dev/null; then kill "$job_pid" 2>/dev/null || true; wait "$job_pid" 2>/dev/null || true; fi
  stop_stack
}
trap cleanup EXIT

run_name() { if [ "$2" -gt 1 ]; then echo "b$1-r$2"; else echo "b$1"; fi; }
for b in $BALANCERS; do
  for r in $(seq 1 "$REPEATS"); do
    run="$(run_name "$b" "$r")"
    if [ -f "$OUT/$run/report.md" ]; then continue; fi
    prefix="mc$b-r$r-$(date +%H%M%S)"
    echo "mooncake-view: $run, topics $prefix. ($(date +%H:%M:%S))" >&2
    "$ROOT/kvr" topics apply --prefix "$prefix." >"$OUT/$run.topics.log" 2>&1
    "$ROOT/kvr" job run -D topics.prefix="$prefix." -D view.key-prefix="$prefix:" -D kafka.starting-offsets=earliest \
      -D kafka.group-id="$prefix" -D cost.prefill-tokens-per-s=50000 $JOB_ARGS --duration 16m >"$OUT/$run.job.log" 2>&1 &
    job_pid=$!
    "$ROOT/kvr" replay --trace "$TRACE" --engines 8 --capacity 32768 --compression 5 --prefill-rate 50000 --decode-rate 150 \
      --speed 1 --publish view --balancers "$b" --policies view,round-robin,least-loaded,sglang,aibrix,oracle \
      --topics-prefix "$prefix." --view-key-prefix "$prefix:" --out "$OUT/$run" $REPLAY_ARGS >"$OUT/$run.log" 2>&1 \
      || echo "mooncake-view: $run failed, see $OUT/$run.log" >&2
    kill "$job_pid" 2>/dev/null || true
    wait "$job_pid" 2>/dev/null || true
    job_pid=""
  done
done
for b in $BALANCERS; do
  for r in $(seq 1 "$REPEATS"); do
    run="$(run_name "$b" "$r")"
    [ -f "$OUT/$run/summary.csv" ] && { echo "== $b balancer(s), run $r"; cat "$OUT/$run/summary.csv"; }
  done
done
echo "mooncake-view: runs and reports in $OUT" >&2
