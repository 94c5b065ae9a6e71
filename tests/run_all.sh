#!/bin/sh
# Runs every test suite that needs no GPU and prints the total as the last
# line: "N passed, N failed". Each suite prints its own "N passed, N failed".
# usage: tests/run_all.sh BUILD_DIR [SANITIZER_BUILD_DIR [TSAN_BUILD_DIR]]
#   BUILD_DIR: the -O2 build (may be ""): every unit test and every
#     tests/suite_*.sh
#   SANITIZER_BUILD_DIR: the ASan+UBSan build: every unit test and the suites
#     that exercise the C code on the whole corpus (conformance, models, cli,
#     the JAX program fixtures of tests/jax)
#   TSAN_BUILD_DIR: the ThreadSanitizer build: the unit tests built there
B=$1
SB=${2:-}
TB=${3:-}
total_p=0; total_f=0
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
run_suite() {
  name=$1; shift
  out=$("$@" 2>&1); rc=$?
  printf '%s\n' "$out" | tail -n 40
  line=$(printf '%s\n' "$out" | grep -oE '[0-9]+ passed, [0-9]+ failed' | tail -n 1)
  p=$(printf '%s' "$line" | awk '{print $1}')
  f=$(printf '%s' "$line" | awk '{print $3}')
  [ -n "$line" ] || { p=0; f=1; echo "$name: printed no result line (exit $rc)"; }
  [ $rc -ne 0 ] && [ "$f" = 0 ] && { f=1; echo "$name: exit status $rc"; }
  total_p=$((total_p + p)); total_f=$((total_f + f))
}
run_build() {  # BUILD_DIR LABEL SUITES...
  dir=$1; label=$2; shift 2
  echo "=== $label ($dir)"
  for t in "$dir"/tests/test_*; do
    [ -x "$t" ] && run_suite "$(basename "$t")" "$t"
  done
  for s in "$@"; do
    [ -f "$s" ] && run_suite "$(basename "$s")" sh "$s" "$dir"
  done
}
[ -n "$B" ] && run_build "$B" "-O2 build" tests/suite_*.sh
[ -n "$SB" ] && run_build "$SB" "ASan+UBSan build" tests/suite_conformance.sh \
  tests/suite_models.sh tests/suite_cli.sh tests/suite_jax.sh tests/suite_verbs.sh tests/suite_cost_dynamic.sh \
  tests/suite_cache.sh tests/suite_pad.sh
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1}
[ -n "$TB" ] && run_build "$TB" "ThreadSanitizer build"
echo "$total_p passed, $total_f failed"
[ $total_f -eq 0 ]
