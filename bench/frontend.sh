#!/bin/sh
# Front-end benchmark: hlo's parse / verify / print times on the shared JAX
# programs, side by side with MLIR's own parser (the C++ one JAX ships, timed
# from Python in the same run), best of N runs each. Prints a table; MLIR's
# ir.Module.parse also verifies, so the ratio column is MLIR's time over
# hlo's parse + verify (above 1: hlo is faster).
# usage: bench/frontend.sh [BUILD_DIR] [RUNS]   (make bench)
B=${1:-build}
RUNS=${2:-20}
SHARED=${HLO_SHARED:-../shared}
files=$(ls "$SHARED"/models/*/*.mlir "$SHARED"/perf/*/*.mlir 2>/dev/null)
"$B/bench/bench_frontend" -n "$RUNS" $files > "$B/bench/hlo.tsv" || exit 1
if python3 -c "import jax" 2>/dev/null; then
  python3 bench/mlir_parse_time.py "$RUNS" $files > "$B/bench/mlir.tsv" || : > "$B/bench/mlir.tsv"
else
  echo "(jax is not installed: no MLIR column)"; : > "$B/bench/mlir.tsv"
fi
awk -F'\t' 'NR == FNR { mlir[$1] = $2; next }
  BEGIN { printf "%-36s %8s %6s %9s %9s %9s %10s %7s\n", "program", "KB", "ops", "parse ms",
          "verify ms", "print ms", "MLIR ms", "ratio" }
  { m = ($1 in mlir) ? mlir[$1] : "";
    r = (m != "" && $4 + $5 > 0) ? sprintf("%.1fx", m / ($4 + $5)) : "-";
    printf "%-36s %8.1f %6d %9.3f %9.3f %9.3f %10s %7s\n", $1, $2 / 1024, $3, $4, $5, $6,
           (m == "" ? "-" : m), r }' "$B/bench/mlir.tsv" "$B/bench/hlo.tsv"
