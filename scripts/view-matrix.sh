#!/usr/bin/env bash
# The view against the other policies on every simulator workload, at 1 and 4 balancers, over three
# seeds, with the demo's failures (an engine killed, another slowed) and the view in the loop: one
# './kvr demo' per run (the local stack, the Flink job, the simulated fleet, every policy on a copy).
# Then one table: per workload, operating point and balancer count, the median over the seeds of
# each policy's block hit rate, TTFT p50 and p99, and the burst class's TTFT p50, with the checks.
#
#   scripts/view-matrix.sh [--engines N] [--capacity C] [-D NAME=VALUE]... [OUT_DIR]
#   WORKLOADS="burst long-context" BALANCERS="4" SEEDS="1" DURATION=120s scripts/view-matrix.sh
#   WORKLOADS="long-context long-prefix" scripts/view-matrix.sh --engines 16 --capacity 4x   # caches 4 prompts deep
#   REPEATS=5 SEEDS=1 WORKLOADS=long-prefix scripts/view-matrix.sh   # one setting five times: the spread between runs
#   DEMO_ARGS="--view-hold 0ms --no-report-slots" scripts/view-matrix.sh   # extra './kvr demo' options (here: no holding)
#
# --engines and --capacity (blocks, or K times the workload's median prompt: 4x) set the operating
# point (default: the demo's 6 engines of 32 768 blocks); each -D goes to the job. A run takes its
# duration plus about a minute; the whole matrix (36 runs of 150 s) about 2.5 hours. Runs already
# in OUT_DIR (a summary.csv) are kept, so an interrupted matrix resumes where it stopped.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ENGINES=6
CAPACITY=32768
JOB_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --engines) ENGINES="$2"; shift 2 ;;
    --capacity) CAPACITY="$2"; shift 2 ;;
    -D) JOB_ARGS+=(-D "$2"); shift 2 ;;
    -D*) JOB_ARGS+=(-D "${1#-D}"); shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "view-matrix: unknown option $1 (--engines N, --capacity C, -D NAME=VALUE, then OUT_DIR)" >&2; exit 2 ;;
    *) break ;;
  esac
done
OUT="${1:-$ROOT/.kvr/matrix/$(date +%Y%m%d-%H%M%S)}"
WORKLOADS="${WORKLOADS:-system-prompt chat one-shot burst long-context mixed}"
BALANCERS="${BALANCERS:-1 4}"
SEEDS="${SEEDS:-1 2 3}"
REPEATS="${REPEATS:-1}"
DURATION="${DURATION:-150s}"
DEMO_ARGS="${DEMO_ARGS:-}"
mkdir -p "$OUT"

# The operating point names its runs unless it is the demo's own (older OUT_DIRs resume as they were).
point=""
if [ "$ENGINES" != 6 ] || [ "$CAPACITY" != 32768 ]; then point="-e$ENGINES-c$CAPACITY"; fi
run_name() { # workload balancers seed repeat
  local r=""
  if [ "$4" -gt 1 ]; then r="-r$4"; fi
  echo "$1$point-b$2-s$3$r"
}

# One stack for every run (the demo reuses a running one).
. "$ROOT/scripts/stack-for-runs.sh"
trap stop_stack EXIT

for w in $WORKLOADS; do
  for b in $BALANCERS; do
    for s in $SEEDS; do
      for r in $(seq 1 "$REPEATS"); do
        run="$(run_name "$w" "$b" "$s" "$r")"
        if [ -f "$OUT/$run/summary.csv" ]; then continue; fi
        echo "view-matrix: $run ($(date +%H:%M:%S))" >&2
        "$ROOT/kvr" demo --workload "$w" --balancers "$b" --seed "$s" --duration "$DURATION" --engines "$ENGINES" \
          --capacity "$CAPACITY" --out "$OUT/$run" ${JOB_ARGS[@]+"${JOB_ARGS[@]}"} $DEMO_ARGS \
          >"$OUT/$run.log" 2>&1 || echo "view-matrix: $run failed, see $OUT/$run.log" >&2
      done
    done
  done
done

# summary.csv: policy,class,requests,completed,failed,hits,hit_rate,block_hit_rate,avoided_tokens_per_hit,
#              load_gini,affinity_routed,staleness,ttft_p50_ms,ttft_p99_ms,held,held_mean_ms
# all-runs.txt: workload balancers seed repeat policy class block_hit p50 p99
{
  for w in $WORKLOADS; do for b in $BALANCERS; do for s in $SEEDS; do for r in $(seq 1 "$REPEATS"); do
    f="$OUT/$(run_name "$w" "$b" "$s" "$r")/summary.csv"
    [ -f "$f" ] && awk -F, -v w="$w$point" -v b="$b" -v s="$s" -v r="$r" 'NR > 1 { print w, b, s, r, $1, $2, $8, $13, $14 }' "$f"
  done; done; done; done
} >"$OUT/all-runs.txt"

# Per workload and balancer count: the median over every run (seeds and repeats) and the view's range
# (min-max) across them; the checks: the view's median p99 at or under the best other policy's, its
# median block hit at least 95 % of the oracle's and at least 90 % in every run, its spread (max - min)
# within 5 % of the oracle's.
printf "%-22s %2s %-16s %4s %10s %10s %10s %12s %s\n" workload b policy runs "block hit" "TTFT p50" "TTFT p99" "burst p50" \
  "view range: block hit, p99" >"$OUT/matrix.txt"
for w in $WORKLOADS; do
  for b in $BALANCERS; do
    awk -v w="$w$point" -v b="$b" '
      function median(list,   n, x, i, j, t) {
        n = split(list, x, " ")
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] + 0 < x[i] + 0) { t = x[i]; x[i] = x[j]; x[j] = t }
        return n == 0 ? "" : (n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2)
      }
      function lo(list,   n, x, i, m) { n = split(list, x, " "); m = x[1]; for (i = 2; i <= n; i++) if (x[i] + 0 < m + 0) m = x[i]; return m }
      function hi(list,   n, x, i, m) { n = split(list, x, " "); m = x[1]; for (i = 2; i <= n; i++) if (x[i] + 0 > m + 0) m = x[i]; return m }
      $1 == w && $2 == b {
        if (!($5 in runs)) order[++policies] = $5
        if ($6 == "all") { hit[$5] = hit[$5] " " $7; p50[$5] = p50[$5] " " $8; p99[$5] = p99[$5] " " $9; runs[$5]++ }
        if ($6 == "burst") burst[$5] = burst[$5] " " $8
      }
      END {
        if (policies == 0) exit
        best = -1
        for (i = 1; i <= policies; i++) {
          p = order[i]; h = median(hit[p]); q50 = median(p50[p]); q99 = median(p99[p]); bp = median(burst[p])
          range = (p == "view" && runs[p] > 1) ? sprintf("%.1f-%.1f %%, %.0f-%.0f ms", 100 * lo(hit[p]), 100 * hi(hit[p]), lo(p99[p]), hi(p99[p])) : ""
          printf "%-22s %2s %-16s %4d %9.1f%% %8.0fms %8.0fms %12s %s\n", w, b, p, runs[p], 100 * h, q50, q99, bp == "" ? "-" : sprintf("%.0fms", bp), range
          if (p != "view" && p != "oracle" && (best < 0 || q99 < best)) best = q99
          if (p == "view") { vh = h; v99 = q99; vb = bp; vlo = lo(hit[p]); vhi = hi(hit[p]) } else if (p == "oracle") oh = h; else if (p == "round-robin") rb = bp
        }
        printf "  checks: view p99 %.0f ms <= best other %.0f ms: %s; view block hit %.1f %% >= 95 %% of the oracle %.1f %%: %s, >= 90 %% in every run (lowest %.1f %%): %s; spread %.1f points <= 5 %% of the oracle: %s", \
          v99, best, (v99 <= best ? "yes" : "NO"), 100 * vh, 100 * oh, (vh >= 0.95 * oh ? "yes" : "NO"), 100 * vlo, (vlo >= 0.9 * oh ? "yes" : "NO"), \
          100 * (vhi - vlo), (vhi - vlo <= 0.05 * oh ? "yes" : "NO")
        if (vb != "") printf "; burst p50 %.0f ms <= 2 x round-robin %.0f ms: %s", vb, rb, (vb <= 2 * rb ? "yes" : "NO")
        printf "\n"
      }' "$OUT/all-runs.txt" >>"$OUT/matrix.txt"
  done
done
cat "$OUT/matrix.txt"
echo "view-matrix: runs and reports in $OUT" >&2
