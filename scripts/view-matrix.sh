#!/usr/bin/env bash
# The view against the other policies on every simulator workload, at 1 and 4 balancers, over three
# seeds, with the demo's failures (an engine killed, another slowed) and the view in the loop: one
# './kvr demo' per run (the local stack, the Flink job, the simulated fleet, every policy on a copy).
# Then one table: per workload and balancer count, the median over the seeds of each policy's block
# hit rate, TTFT p50 and p99, and the burst class's TTFT p50, with the issue's three checks.
#
#   scripts/view-matrix.sh [OUT_DIR]
#   WORKLOADS="burst long-context" BALANCERS="4" SEEDS="1" DURATION=120s scripts/view-matrix.sh
#   DEMO_ARGS="--view-hold 0ms --no-report-slots" scripts/view-matrix.sh   # extra './kvr demo' options (here: no holding)
#
# A run takes its duration plus about a minute; the whole matrix (36 runs of 150 s) about 2.5 hours.
# Runs already in OUT_DIR (a summary.csv) are kept, so an interrupted matrix resumes where it stopped.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/.kvr/matrix/$(date +%Y%m%d-%H%M%S)}"
WORKLOADS="${WORKLOADS:-system-prompt chat one-shot burst long-context mixed}"
BALANCERS="${BALANCERS:-1 4}"
SEEDS="${SEEDS:-1 2 3}"
DURATION="${DURATION:-150s}"
DEMO_ARGS="${DEMO_ARGS:-}"
mkdir -p "$OUT"

# One stack for every run (the demo reuses a running one).
. "$ROOT/scripts/stack-for-runs.sh"
trap stop_stack EXIT

for w in $WORKLOADS; do
  for b in $BALANCERS; do
    for s in $SEEDS; do
      run="$w-b$b-s$s"
      if [ -f "$OUT/$run/summary.csv" ]; then continue; fi
      echo "view-matrix: $run ($(date +%H:%M:%S))" >&2
      "$ROOT/kvr" demo --workload "$w" --balancers "$b" --seed "$s" --duration "$DURATION" --out "$OUT/$run" $DEMO_ARGS \
        >"$OUT/$run.log" 2>&1 || echo "view-matrix: $run failed, see $OUT/$run.log" >&2
    done
  done
done

# summary.csv: policy,class,requests,completed,failed,hits,hit_rate,block_hit_rate,avoided_tokens_per_hit,
#              load_gini,affinity_routed,staleness,ttft_p50_ms,ttft_p99_ms,held,held_mean_ms
{
  for w in $WORKLOADS; do for b in $BALANCERS; do for s in $SEEDS; do
    f="$OUT/$w-b$b-s$s/summary.csv"
    [ -f "$f" ] && awk -F, -v w="$w" -v b="$b" -v s="$s" 'NR > 1 { print w, b, s, $1, $2, $8, $13, $14 }' "$f"
  done; done; done
} >"$OUT/all-runs.txt"

printf "%-14s %2s %-16s %5s %10s %10s %10s %12s\n" workload b policy runs "block hit" "TTFT p50" "TTFT p99" "burst p50" \
  >"$OUT/matrix.txt"
for w in $WORKLOADS; do
  for b in $BALANCERS; do
    awk -v w="$w" -v b="$b" '
      function median(list,   n, x, i, j, t) {
        n = split(list, x, " ")
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] + 0 < x[i] + 0) { t = x[i]; x[i] = x[j]; x[j] = t }
        return n == 0 ? "" : (n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2)
      }
      $1 == w && $2 == b {
        if (!($4 in runs)) order[++policies] = $4
        if ($5 == "all") { hit[$4] = hit[$4] " " $6; p50[$4] = p50[$4] " " $7; p99[$4] = p99[$4] " " $8; runs[$4]++ }
        if ($5 == "burst") burst[$4] = burst[$4] " " $7
      }
      END {
        if (policies == 0) exit
        best = -1
        for (i = 1; i <= policies; i++) {
          p = order[i]; h = median(hit[p]); q50 = median(p50[p]); q99 = median(p99[p]); bp = median(burst[p])
          printf "%-14s %2s %-16s %5d %9.1f%% %8.0fms %8.0fms %12s\n", w, b, p, runs[p], 100 * h, q50, q99, bp == "" ? "-" : sprintf("%.0fms", bp)
          if (p != "view" && p != "oracle" && (best < 0 || q99 < best)) best = q99
          if (p == "view") { vh = h; v99 = q99; vb = bp } else if (p == "oracle") oh = h; else if (p == "round-robin") rb = bp
        }
        printf "  checks: view p99 %.0f ms <= best other %.0f ms: %s; view block hit %.1f %% >= 95 %% of the oracle %.1f %%: %s", \
          v99, best, (v99 <= best ? "yes" : "NO"), 100 * vh, 100 * oh, (vh >= 0.95 * oh ? "yes" : "NO")
        if (vb != "") printf "; burst p50 %.0f ms <= 2 x round-robin %.0f ms: %s", vb, rb, (vb <= 2 * rb ? "yes" : "NO")
        printf "\n"
      }' "$OUT/all-runs.txt" >>"$OUT/matrix.txt"
  done
done
cat "$OUT/matrix.txt"
echo "view-matrix: runs and reports in $OUT" >&2
