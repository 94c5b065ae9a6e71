#!/bin/bash
# The conformance runner: runs the StableHLO project's interpreter tests and
# JAX-generated test data under build/hlo and prints a table of passed /
# failed / skipped per folder.
#
# usage: tests/conformance.sh [CONFORMANCE_DIR] [BUILD_DIR]
#   CONFORMANCE_DIR  default ../shared/conformance
#   BUILD_DIR        default build (uses BUILD_DIR/hlo)
#
# How each file is treated (see CONFORMANCE_DIR/README.md):
#   interpret/, interpret/chlo/, testdata/quantized/: run with --split-input-file;
#       a piece with `expected-error` comments must fail with that message
#   testdata/*.mlir: run; its @check.* custom calls compare with @expected()
#   testdata/dynamic/: parse + verify only (no expected values in these files)
#   RUN-DISABLED files: run, reported on their own line, not counted
#   tests/conformance_xfail.txt: files known to fail, each with its reason;
#       reported as "xfail", and as an error once they pass (remove them then)
# Exit status 1 when any file fails that is not listed as a known failure.
set -u
CONF=${1:-../shared/conformance}
B=${2:-build}
HLO=${HLO_BIN:-$B/hlo}
XFAIL=tests/conformance_xfail.txt
OUTDIR="$B/conformance"
JOBS=${JOBS:-2}
TIMEOUT=${TIMEOUT:-120}
rm -rf "$OUTDIR/logs"
mkdir -p "$OUTDIR"
[ -x "$HLO" ] || { echo "conformance: $HLO not built"; echo "0 passed, 1 failed"; exit 1; }
[ -d "$CONF" ] || { echo "conformance: no corpus at $CONF"; echo "0 passed, 1 failed"; exit 1; }

# One file -> one line "RESULT<TAB>folder<TAB>file<TAB>detail"
run_one() {
  f=$1
  rel=${f#$CONF/}
  folder=$(dirname "$rel")/
  log="$OUTDIR/logs/$(echo "$rel" | tr '/' '_').log"
  mkdir -p "$OUTDIR/logs"
  if grep -q 'RUN-DISABLED' "$f" && ! grep -q '^// RUN:.*interpret' "$f"; then kind=disabled; else kind=run; fi
  case "$rel" in
    testdata/dynamic/*)
      timeout "$TIMEOUT" "$HLO" check "$f" >"$log" 2>&1; rc=$? ;;
    interpret/printing.mlir)
      timeout "$TIMEOUT" "$HLO" run --print-results --split-input-file "$f" >"$log.out" 2>"$log"; rc=$?
      if [ $rc -eq 0 ]; then
        sh tests/filecheck.sh "$f" CHECK "$log.out" >>"$log" 2>&1; rc=$?
      fi ;;
    interpret/api_input_arguments.mlir)
      timeout "$TIMEOUT" "$HLO" run --print-results "$f" --arg 'dense<1> : tensor<2xi32>' --arg 'dense<2> : tensor<2xi32>' >"$log.out" 2>"$log"; rc=$?
      if [ $rc -eq 0 ]; then
        sh tests/filecheck.sh "$f" CHECK "$log.out" >>"$log" 2>&1; rc=$?
      fi ;;
    interpret/probe.mlir)
      pd=$(mktemp -d)
      timeout "$TIMEOUT" "$HLO" run --quiet --split-input-file --probe-dir "$pd" "$f" >"$log" 2>&1; rc=$?
      rm -rf "$pd" ;;
    interpret/*|testdata/quantized/*)
      timeout "$TIMEOUT" "$HLO" run --quiet --split-input-file --verify-diagnostics "$f" >"$log" 2>&1; rc=$? ;;
    *)
      timeout "$TIMEOUT" "$HLO" run --quiet "$f" >"$log" 2>&1; rc=$? ;;
  esac
  detail=$(grep -m1 -E 'error|fail' "$log" | cut -c1-200)
  [ $rc -eq 124 ] && detail="timed out after ${TIMEOUT}s"
  if [ $rc -eq 0 ]; then res=pass; else res=fail; fi
  [ $kind = disabled ] && res="disabled-$res"
  printf '%s\t%s\t%s\t%s\n' "$res" "$folder" "$rel" "$detail"
}
export -f run_one
export CONF HLO OUTDIR TIMEOUT

start=$(date +%s)
find "$CONF" -name '*.mlir' | sort | xargs -P "$JOBS" -I{} bash -c 'run_one "$1"' _ {} >"$OUTDIR/results.tsv"
secs=$(( $(date +%s) - start ))

awk -F'\t' -v xfail="$XFAIL" -v out="$OUTDIR" -v secs="$secs" '
BEGIN {
  while ((getline line < xfail) > 0) {
    if (line ~ /^#/ || line ~ /^[ \t]*$/) continue
    split(line, p, /[ \t]+/); xf[p[1]] = 1
  }
}
{
  res = $1; folder = $2; file = $3; detail = $4
  folders[folder] = 1; files[folder]++
  if (res == "pass") pass[folder]++
  else if (res == "fail") {
    if (file in xf) { xfl[folder]++; }
    else { fail[folder]++; failures = failures sprintf("  FAIL %s: %s\n", file, detail) }
  } else if (res == "disabled-pass") dpass[folder]++
  else if (res == "disabled-fail") dfail[folder]++
  if (res == "pass" && (file in xf)) unexpected = unexpected sprintf("  XPASS %s (remove it from %s)\n", file, xfail)
}
END {
  printf "%-22s %6s %7s %7s %7s %9s %9s\n", "folder", "files", "passed", "failed", "xfail", "disabled:", "disabled:"
  printf "%-22s %6s %7s %7s %7s %9s %9s\n", "", "", "", "", "", "passed", "failed"
  for (f in folders) {
    note = (f == "testdata/dynamic/") ? "  (parse + verify only: no expected values)" : ""
    printf "%-22s %6d %7d %7d %7d %9d %9d%s\n", f, files[f], pass[f], fail[f], xfl[f], dpass[f], dfail[f], note | "sort"
    tp += pass[f]; tf += fail[f]; tx += xfl[f]; tf2 += files[f]; tdp += dpass[f]; tdf += dfail[f]
  }
  close("sort")
  printf "%-22s %6d %7d %7d %7d %9d %9d\n", "total", tf2, tp, tf, tx, tdp, tdf
  printf "disabled: files whose interpreter RUN line is disabled upstream (RUN-DISABLED, e.g.\n"
  printf "\"inaccurate\"); they run too, but are not counted as passed or failed.\n"
  printf "conformance took %d s; logs in %s/logs\n", secs, out
  if (failures != "") { printf "failures:\n%s", failures }
  if (unexpected != "") { printf "now passing:\n%s", unexpected; tf += 1 }
  printf "conformance: %d passed, %d failed\n", tp, tf
  exit tf ? 1 : 0
}' "$OUTDIR/results.tsv"
