#!/bin/sh
# Runs every test suite that needs no GPU and prints the total as the last
# line: "N passed, N failed". Each suite prints its own "N passed, N failed".
# Usage: tests/run_all.sh BUILD_DIR
B=${1:-build}
total_p=0; total_f=0; status=0
run_suite() {
  name=$1; shift
  out=$("$@" 2>&1); rc=$?
  printf '%s\n' "$out" | tail -n 40
  line=$(printf '%s\n' "$out" | grep -E '[0-9]+ passed, [0-9]+ failed' | tail -n 1)
  p=$(printf '%s' "$line" | sed -E 's/.*[^0-9]?([0-9]+) passed.*/\1/')
  f=$(printf '%s' "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
  [ -n "$line" ] || { p=0; f=1; echo "$name: printed no result line (exit $rc)"; }
  [ $rc -ne 0 ] && [ "$f" = 0 ] && { f=1; echo "$name: exit status $rc"; }
  total_p=$((total_p + p)); total_f=$((total_f + f))
}
for t in "$B"/tests/test_*; do
  [ -x "$t" ] && run_suite "$(basename "$t")" "$t"
done
for s in tests/suite_*.sh; do
  [ -f "$s" ] && run_suite "$(basename "$s")" sh "$s" "$B"
done
echo "$total_p passed, $total_f failed"
[ $total_f -eq 0 ]
