# Sourced by the run scripts (view-matrix.sh, mooncake-view.sh), with ROOT and OUT set: one local
# stack for every run, a running one reused. stop_stack, for the caller's EXIT trap, stops it only
# if this script started it.
started_stack=0
if ! "$ROOT/kvr" stack status >/dev/null 2>&1; then
  "$ROOT/kvr" stack up >"$OUT/stack.log" 2>&1
  started_stack=1
fi
stop_stack() { if [ "$started_stack" = 1 ]; then "$ROOT/kvr" stack down >>"$OUT/stack.log" 2>&1 || true; fi; }
