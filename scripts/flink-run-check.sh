#!/usr/bin/env bash
# Runs the README's `flink run` command, exactly as written there but for the addresses, on a
# standalone Flink 2.2 session cluster started from Maven Central jars (no flink-dist), against the
# local stack; checks that every task runs and the view's meta key refreshes in Redis; then cancels
# the job and stops the cluster by pid. Takes a few minutes; not part of CI (DESIGN.md §6).
#
#   scripts/flink-run-check.sh            # uses the running ./kvr stack, or starts one (and stops it)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="$ROOT/target/flink-run-check"
rm -rf "$WORK" && mkdir -p "$WORK/conf" "$WORK/log" "$WORK/checkpoints"
cd "$ROOT"

pids=()
started_stack=0
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  done
  if [ "$started_stack" = 1 ]; then ./kvr stack down >/dev/null || true; fi
}
trap cleanup EXIT

if ! env_lines="$(./kvr stack env 2>/dev/null)"; then
  ./kvr stack up
  started_stack=1
  env_lines="$(./kvr stack env)"
fi
eval "$env_lines"
./kvr topics apply >/dev/null

echo "building the job jar and the Flink classpath ..."
mvn -B -q -pl flink-jobs -am package -DskipTests
JAR="$(ls flink-jobs/target/kvr-flink-jobs-*-job.jar)"
mvn -B -q dependency:build-classpath -f scripts/flink-session/pom.xml -Dmdep.outputFile="$WORK/classpath.txt"
CP="$(cat "$WORK/classpath.txt")"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
RPC_PORT="$(free_port)"
REST_PORT="$(free_port)"
OPENS="--add-exports=java.base/sun.net.util=ALL-UNNAMED --add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED \
--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
--add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED \
--add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED \
--add-opens=java.base/java.text=ALL-UNNAMED --add-opens=java.base/java.time=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED \
--add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED \
--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED"
cat > "$WORK/conf/config.yaml" <<EOF
jobmanager.rpc.address: localhost
jobmanager.rpc.port: $RPC_PORT
jobmanager.bind-host: localhost
taskmanager.bind-host: localhost
taskmanager.host: localhost
rest.address: localhost
rest.bind-address: localhost
rest.port: $REST_PORT
jobmanager.memory.process.size: 1024m
taskmanager.memory.process.size: 2560m
taskmanager.numberOfTaskSlots: 4
env.java.opts.all: $OPENS
EOF
cat > "$WORK/conf/log4j.properties" <<'EOF'
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${sys:log.file}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{HH:mm:ss,SSS} %-5p %c{1} - %m%n
EOF

# The memory flags Flink's own scripts compute (else "taskmanager.cpu.cores is not set").
resource_params() {
  java -cp "$CP" org.apache.flink.runtime.util.bash.BashJavaUtils "$1" --configDir "$WORK/conf" 2>/dev/null \
    | grep '^BASH_JAVA_UTILS_EXEC_RESULT:' | sed 's/^BASH_JAVA_UTILS_EXEC_RESULT://'
}
mapfile -t JM < <(resource_params GET_JM_RESOURCE_PARAMS)
mapfile -t TM < <(resource_params GET_TM_RESOURCE_PARAMS)
LOG4J="-Dlog4j.configurationFile=file:$WORK/conf/log4j.properties"

# shellcheck disable=SC2086
java ${JM[0]} $OPENS $LOG4J -Dlog.file="$WORK/log/jobmanager.log" -cp "$CP" \
  org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint --configDir "$WORK/conf" ${JM[1]} \
  >"$WORK/log/jobmanager.out" 2>&1 &
pids+=("$!")
# shellcheck disable=SC2086
java ${TM[0]} $OPENS $LOG4J -Dlog.file="$WORK/log/taskmanager.log" -cp "$CP" \
  org.apache.flink.runtime.taskexecutor.TaskManagerRunner --configDir "$WORK/conf" ${TM[1]} \
  >"$WORK/log/taskmanager.out" 2>&1 &
pids+=("$!")

REST="http://127.0.0.1:$REST_PORT"
for _ in $(seq 1 120); do
  if curl -sf "$REST/taskmanagers" 2>/dev/null | grep -q '"slotsNumber":4'; then break; fi
  sleep 0.5
done
curl -sf "$REST/taskmanagers" 2>/dev/null | grep -q '"slotsNumber":4' || { echo "the session cluster did not come up; logs in $WORK/log" >&2; exit 1; }
echo "session cluster up at $REST"

# The README's command, word for word, but for the addresses and where state goes.
PREFIX="kvr-check-$$:"
mapfile -t ARGS < <(awk '/^flink run --detached/{on=1} on && /^```/{exit} on' README.md \
  | sed -e 's/ \\$//' -e 's/^ *//' \
  | sed -e "s#^--kafka.bootstrap .*#--kafka.bootstrap $KAFKA_BOOTSTRAP#" \
        -e "s#^--schema-registry.url .*#--schema-registry.url $SCHEMA_REGISTRY_URL#" \
        -e "s#^--redis.url .*#--redis.url $REDIS_URL#" \
        -e "s#^--view.key-prefix .*#--view.key-prefix $PREFIX#" \
        -e "s#^--kafka.group-id .*#--kafka.group-id kvr-check-$$#" \
        -e "s#^--job.checkpoint-dir .*#--job.checkpoint-dir file://$WORK/checkpoints#")
[ "${ARGS[0]}" = "flink run --detached" ] || { echo "no 'flink run' command found in README.md" >&2; exit 1; }
cmd=(run --detached)
for line in "${ARGS[@]:1}"; do
  read -r -a words <<<"$line"
  # Quoted values ("30 s") stay one argument.
  if [[ "$line" =~ ^(--[^ ]+)\ \"(.*)\"$ ]]; then cmd+=("${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"); else cmd+=("${words[@]}"); fi
done
echo "flink ${cmd[*]}"
# shellcheck disable=SC2086
FLINK_CONF_DIR="$WORK/conf" java $OPENS $LOG4J -Dlog.file="$WORK/log/cli.log" -cp "$CP" \
  org.apache.flink.client.cli.CliFrontend "${cmd[@]}" | tee "$WORK/log/submit.out"
JOB="$(grep -o 'JobID [0-9a-f]\{32\}' "$WORK/log/submit.out" | awk '{print $2}')"
[ -n "$JOB" ] || { echo "no job id in the submission output" >&2; exit 1; }

for _ in $(seq 1 120); do
  # Tasks of every vertex, and how many of them run.
  read -r running total < <(curl -sf "$REST/jobs/$JOB" 2>/dev/null | python3 -c '
import json, sys
vs = json.load(sys.stdin)["vertices"]
print(sum(v["tasks"].get("RUNNING", 0) for v in vs), sum(v["parallelism"] for v in vs))' 2>/dev/null || echo "0 -1")
  if [ -n "$total" ] && [ "$total" = "$running" ]; then break; fi
  sleep 0.5
done
echo "job $JOB: $running of $total tasks running"
[ -n "$total" ] && [ "$total" = "$running" ] || { echo "not every task is running; logs in $WORK/log" >&2; exit 1; }
! grep -q 'Exception' "$WORK/log/taskmanager.log" || { echo "exceptions in the TaskManager log: $WORK/log/taskmanager.log" >&2; exit 1; }

host_port="${REDIS_URL#redis://}"
first="$(redis-cli -h "${host_port%:*}" -p "${host_port#*:}" HGET "${PREFIX}meta" updated_ms || true)"
sleep 2
second="$(redis-cli -h "${host_port%:*}" -p "${host_port#*:}" HGET "${PREFIX}meta" updated_ms || true)"
[ -n "$first" ] && [ "$second" -gt "$first" ] || { echo "the view's meta key is not refreshing ($first, $second)" >&2; exit 1; }
echo "the view's meta key refreshes in Redis (updated_ms $first -> $second)"

curl -sf -X PATCH "$REST/jobs/$JOB?mode=cancel" >/dev/null
echo "OK: the README's flink run command runs on a standalone Flink session cluster"
