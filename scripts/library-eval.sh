# Sourced by scripts/pick-profile.sh and scripts/pick-diff.sh: run the routing view's function
# library as one EVAL on the Redis of REDIS_URL (no password), under a fresh key prefix.
#   library_body FILE   prints the library without its first line (#!lua) and its registrations,
#                       so its local functions can be called from code appended after it
#   run_eval SCRIPT ARG...   EVAL of the file SCRIPT with no keys and ARGs
#   EVAL_PREFIX         the run's key prefix; every key under it is deleted when the script exits,
#                       with the files in EVAL_TEMP_FILES
: "${REDIS_URL:?set REDIS_URL (. <(./kvr stack env))}"
eval_hostport="${REDIS_URL#redis://}"
eval_hostport="${eval_hostport%%/*}"
eval_host="${eval_hostport%:*}"
eval_port="${eval_hostport##*:}"
EVAL_PREFIX="kvr-eval-$$-$(date +%s):"
EVAL_TEMP_FILES=()
eval_cleanup() {
  redis-cli -h "$eval_host" -p "$eval_port" --scan --pattern "$EVAL_PREFIX*" | xargs -r redis-cli -h "$eval_host" -p "$eval_port" DEL >/dev/null
  rm -f "${EVAL_TEMP_FILES[@]}"
}
trap eval_cleanup EXIT

library_body() {
  sed -e '1d' -e '/^redis.register_function/,$d' "$1"
}

run_eval() {
  local script="$1" sha
  shift
  # Loaded from stdin, then run by its digest: two libraries together are longer than one command-line
  # argument may be (128 KiB on Linux).
  sha="$(redis-cli -h "$eval_host" -p "$eval_port" -x SCRIPT LOAD <"$script")"
  redis-cli -h "$eval_host" -p "$eval_port" EVALSHA "$sha" 0 "$@"
}
