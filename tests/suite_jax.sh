#!/bin/sh
# suite_jax.sh — programs JAX printed (tests/jax/GROUP/CASE/), each run on hlo
# and checked against the value recorded beside it. Made by the generators
# tests/jax/gen_*.py (pip JAX on the CPU); committed, so this suite needs no
# Python. A case folder holds:
#   program.mlir          what JAX printed (lower(...).as_text(), jax.export, ...)
#   inputs/argK.npy       the K-th argument (optional; none for a program without)
#   expected/outK.npy     the K-th result's right value (XLA:CPU, ml_dtypes or the spec;
#                         the generator's docstring says which and why)
#   cmp                   npycmp flags for float results (default: --rtol 1e-5);
#                         integer and bool results are always compared exactly
#   flags                 extra `hlo run` flags, one line (e.g. --entry NAME)
#   expect_error          the run must fail (exit 1) and its output must contain
#                         every line of this file; expected/ is then not read
#   expect_output         the run's output (stdout+stderr) must contain every line
# Every program is also printed and the printed text printed again: the two must be
# identical (the round trip), and must verify.
# Prints "ok"/"FAIL" per case, then "jax: N passed, N failed".
# usage: tests/suite_jax.sh [BUILD_DIR] [GROUP...]
cd "$(dirname "$0")/.." || exit 1
B=${1:-build}
[ $# -gt 0 ] && shift
HLO=$B/hlo
CMP=$B/tests/tools/npycmp
pass=0; fail=0
if [ ! -x "$HLO" ] || [ ! -x "$CMP" ]; then
  echo "jax: $HLO or $CMP not built"; echo "jax: 0 passed, 1 failed"; exit 1
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/hlo_jax.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM

groups=${*:-$(for g in tests/jax/*/; do basename "$g"; done)}
sanitizer_report() { grep -Eq 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$1"; }

# contains_lines FILE OUTPUT: every non-empty line of FILE occurs in OUTPUT.
contains_lines() {
  while IFS= read -r line || [ -n "$line" ]; do
    [ -z "$line" ] && continue
    grep -Fq -- "$line" "$2" || { echo "missing '$line'"; return 1; }
  done <"$1"
  return 0
}

run_case() {  # DIR LABEL
  d=$1; label=$2; od=$T/out; rm -rf "$od"
  # Round trip: print, then print the printed text; both must succeed and agree.
  if ! "$HLO" print "$d/program.mlir" >"$T/p1.mlir" 2>"$T/p1.err"; then
    echo "FAIL $label: print: $(grep -m1 error "$T/p1.err" | cut -c1-200)"; return 1
  fi
  if ! "$HLO" print "$T/p1.mlir" >"$T/p2.mlir" 2>"$T/p2.err"; then
    echo "FAIL $label: printed text does not parse back: $(grep -m1 error "$T/p2.err" | cut -c1-200)"
    return 1
  fi
  if ! cmp -s "$T/p1.mlir" "$T/p2.mlir"; then
    echo "FAIL $label: the round trip changes the text:"; diff "$T/p1.mlir" "$T/p2.mlir" | head -n 6
    return 1
  fi
  args=""
  if [ -d "$d/inputs" ]; then
    n=$(ls "$d/inputs" | wc -l); i=0
    while [ $i -lt "$n" ]; do args="$args --input $d/inputs/arg$i.npy"; i=$((i + 1)); done
  fi
  flags=""; [ -f "$d/flags" ] && flags=$(cat "$d/flags")
  # shellcheck disable=SC2086
  "$HLO" run --quiet "$d/program.mlir" $args $flags --output-dir "$od" >"$T/run.log" 2>&1
  rc=$?
  if [ $rc -ge 128 ] || sanitizer_report "$T/run.log"; then
    echo "FAIL $label: CRASH (exit $rc)"; tail -n 8 "$T/run.log"; return 1
  fi
  if [ -f "$d/expect_output" ]; then
    r=$(contains_lines "$d/expect_output" "$T/run.log") || { echo "FAIL $label: output: $r"; tail -n 4 "$T/run.log"; return 1; }
  fi
  if [ -f "$d/expect_error" ]; then
    [ $rc -eq 1 ] || { echo "FAIL $label: exit $rc, want 1 (an error)"; tail -n 4 "$T/run.log"; return 1; }
    r=$(contains_lines "$d/expect_error" "$T/run.log") || { echo "FAIL $label: error: $r"; tail -n 4 "$T/run.log"; return 1; }
    return 0
  fi
  if [ $rc -ne 0 ]; then
    echo "FAIL $label: exit $rc: $(grep -m1 error "$T/run.log" | cut -c1-220)"; return 1
  fi
  cmpflags="--rtol 1e-5"; [ -f "$d/cmp" ] && cmpflags=$(cat "$d/cmp")
  for exp in "$d"/expected/out*.npy; do
    [ -f "$exp" ] || continue
    k=$(basename "$exp")
    # shellcheck disable=SC2086
    r=$("$CMP" "$od/$k" "$exp" $cmpflags 2>&1) || { echo "FAIL $label: $k: $r"; return 1; }
  done
  return 0
}

for g in $groups; do
  [ -d "tests/jax/$g" ] || { echo "FAIL $g: no tests/jax/$g"; fail=$((fail + 1)); continue; }
  gp=0; gf=0
  for d in tests/jax/"$g"/*/; do
    [ -f "$d/program.mlir" ] || continue
    label="$g/$(basename "$d")"
    if run_case "${d%/}" "$label"; then gp=$((gp + 1)); else gf=$((gf + 1)); fi
  done
  printf '%-12s %4d passed, %d failed\n' "$g" "$gp" "$gf"
  pass=$((pass + gp)); fail=$((fail + gf))
done
echo "jax: $pass passed, $fail failed"
[ $fail -eq 0 ]
