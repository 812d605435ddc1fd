#!/usr/bin/env bash
# nginx in front of real HTTP engines, end to end, the view beside nginx's own balancers: per run,
# fresh simulated engines behind vLLM's interfaces ('kvr engines': OpenAI HTTP, ZMQ KV events,
# /metrics), the bridge following them into Kafka, the job writing the view to Redis, nginx routing
# the load generator's requests ('kvr load') by the view ('kvr gateway', its access log shipped as
# decisions and outcomes) or by stock nginx (round robin, least_conn, a consistent hash of the client
# header). The bridge and the job run in every run, so every balancer shares the machine alike.
# Then one table: per workload and balancer count, the median over the seeds of each balancer's TTFT
# p50 and p99 as the clients saw them, the share of prompt tokens the engines found cached, and the
# load Gini over the engines.
#
#   scripts/gateway-bench.sh [OUT_DIR]
#   WORKLOADS="chat long-prefix" SEEDS="1 2 3" NGINX="1 4" BALANCERS="view least-conn" scripts/gateway-bench.sh
#   ENGINES=6 CAPACITY=32768 DURATION=150s FAILURES="kill:2@60,slow:1@90/30x0.25" scripts/gateway-bench.sh
#   RATE_SCALE=0.5 scripts/gateway-bench.sh   # the workload's rates × this (default: ENGINES / 8, as the demo)
#
# A run takes its duration plus about a minute (the job's start). Runs already in OUT_DIR (a
# load/summary.csv) are kept, so an interrupted bench resumes where it stopped.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/.kvr/gateway-bench/$(date +%Y%m%d-%H%M%S)}"
WORKLOADS="${WORKLOADS:-system-prompt chat one-shot burst long-context mixed}"
BALANCERS="${BALANCERS:-view round-robin least-conn client-hash}"
NGINX="${NGINX:-1 4}"
SEEDS="${SEEDS:-1 2 3}"
ENGINES="${ENGINES:-6}"
CAPACITY="${CAPACITY:-32768}"
DURATION="${DURATION:-150s}"
HOLD="${HOLD:-30s}"
RATE_SCALE="${RATE_SCALE:-$(awk -v e="$ENGINES" 'BEGIN { printf "%.3f", e / 8 }')}"
seconds="${DURATION%s}"
FAILURES="${FAILURES-$(awk -v d="$seconds" 'BEGIN { printf "kill:2@%.0f,slow:1@%.0f/%.0fx0.25", d * 0.4, d * 0.6, d * 0.2 }')}"
mkdir -p "$OUT"

. "$ROOT/scripts/stack-for-runs.sh"
eval "$("$ROOT/kvr" stack env)"
redis_host="$(echo "$REDIS_URL" | sed -E 's#redis://([^:]+):.*#\1#')"
redis_port="$(echo "$REDIS_URL" | sed -E 's#.*:([0-9]+)/?$#\1#')"

pids=()
stop_run() {
  for p in "${pids[@]:-}"; do
    if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then kill "$p" 2>/dev/null || true; fi
  done
  for p in "${pids[@]:-}"; do
    if [ -n "$p" ]; then wait "$p" 2>/dev/null || true; fi
  done
  pids=()
}
cleanup() { stop_run; stop_stack; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
# Waits (bounded) until a command succeeds.
await() {
  local what="$1" tries="$2"; shift 2
  for _ in $(seq 1 "$tries"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  echo "gateway-bench: gave up waiting for $what" >&2
  return 1
}

life="$((seconds + 180))s"
for w in $WORKLOADS; do
  for n in $NGINX; do
    for s in $SEEDS; do
      for bal in $BALANCERS; do
        run="$w/n$n/s$s/$bal"
        dir="$OUT/$run"
        if [ -f "$dir/load/summary.csv" ]; then continue; fi
        mkdir -p "$dir"
        prefix="gw-$(date +%H%M%S)-$RANDOM"
        echo "gateway-bench: $run, topics $prefix. ($(date +%H:%M:%S))" >&2
        "$ROOT/kvr" topics apply --prefix "$prefix." >"$dir/topics.log" 2>&1
        "$ROOT/kvr" engines --count "$ENGINES" --capacity "$CAPACITY" --engines-file "$dir/engines.yaml" \
          ${FAILURES:+--failures "$FAILURES"} --duration "$life" >"$dir/engines.log" 2>&1 &
        pids+=($!)
        await "the engines" 60 test -f "$dir/engines.yaml"
        "$ROOT/kvr" job run -D topics.prefix="$prefix." -D view.key-prefix="$prefix:" -D kafka.starting-offsets=earliest \
          -D kafka.group-id="$prefix" -D engine.suspect-after="3 s" -D engine.dead-after="8 s" --duration "$life" >"$dir/job.log" 2>&1 &
        pids+=($!)
        "$ROOT/kvr" bridge --config "$dir/engines.yaml" --topics-prefix "$prefix." --duration "$life" >"$dir/bridge.log" 2>&1 &
        pids+=($!)
        # The view is up once the job has written the engine table from the bridge's load reports.
        await "the view's engine table" 180 sh -c "[ \"\$(redis-cli -h $redis_host -p $redis_port HLEN '$prefix:{head}:engines')\" -ge $ENGINES ]"
        engine_args="$(grep -o -- '--engine [^ ]*' "$dir/engines.log" | tr '\n' ' ')"
        targets=()
        for g in $(seq 1 "$n"); do
          port="$(free_port)"
          "$ROOT/kvr" gateway $engine_args --model sim-llama-8b --listen "$port" --key-prefix "$prefix:" --balance "$bal" --hold "$HOLD" \
            --topics-prefix "$prefix." --dir "$dir/nginx-$g" --duration "$life" >"$dir/gateway-$g.log" 2>&1 &
          pids+=($!)
          await "nginx $g" 60 curl -s -o /dev/null "http://127.0.0.1:$port/"
          targets+=(--target "http://127.0.0.1:$port")
        done
        "$ROOT/kvr" load "${targets[@]}" --workload "$w" --seed "$s" --duration "$DURATION" --rate-scale "$RATE_SCALE" \
          --out "$dir/load" >"$dir/load.log" 2>&1 || echo "gateway-bench: $run: the load failed, see $dir/load.log" >&2
        stop_run
      done
    done
  done
done

# The table: medians over the seeds of the "all" row of each run.
echo "workload,nginx,balancer,seeds,ttft_p50_ms,ttft_p99_ms,cached_share,upstream_gini,failed" >"$OUT/table.csv"
for w in $WORKLOADS; do
  for n in $NGINX; do
    for bal in $BALANCERS; do
      rows=""
      for s in $SEEDS; do
        f="$OUT/$w/n$n/s$s/$bal/load/summary.csv"
        [ -f "$f" ] && rows="$rows$(awk -F, '$1 == "all"' "$f")"$'\n'
      done
      [ -z "$rows" ] && continue
      printf '%s' "$rows" | awk -F, -v w="$w" -v n="$n" -v b="$bal" '
        function median(a, k,   i, j, t) { for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                                           return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
        NF > 1 { k++; p50[k] = $5; p99[k] = $6; cached[k] = $7; gini[k] = $8; failed[k] = $4 }
        END { printf "%s,%s,%s,%d,%.1f,%.1f,%.4f,%.4f,%.0f\n", w, n, b, k, median(p50, k), median(p99, k), median(cached, k), median(gini, k), median(failed, k) }'
    done
  done
done >>"$OUT/table.csv"
column -s, -t "$OUT/table.csv"
echo "gateway-bench: runs and table in $OUT" >&2
