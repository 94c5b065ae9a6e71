#!/bin/sh
# program_rates.sh — each GEMM shape of StableHLO programs at the rate hlo's
# own gemm (the library it links, as it calls it) gets on this machine:
# the "library's own rate" that a program's GEMM kernels are compared with.
#
#   sh bench/blas/program_rates.sh BUILD FILE.mlir...
#
# For each FILE: a line "# FILE", then gemm_rate's line per distinct f32
# shape (bench/blas/shapes.py), then per bf16 shape (bf16 operands, f32
# result), on HLO_NUM_THREADS threads (default: the online cores). Builds
# BUILD/bench/blas/gemm_rate when missing. Needs python3.
set -e
BUILD=${1:?usage: program_rates.sh BUILD FILE.mlir...}
shift
G="$BUILD/bench/blas/gemm_rate"
[ -x "$G" ] || make --no-print-directory BUILD="$BUILD" "$G" >/dev/null
T=${HLO_NUM_THREADS:-$(nproc)}
for f in "$@"; do
  echo "# $f"
  for dt in f32 bf16; do
    shapes=$(python3 "$(dirname "$0")/shapes.py" --dtype "$dt" "$f")
    [ -n "$shapes" ] || continue
    # shellcheck disable=SC2086 # the shapes are words
    HLO_NUM_THREADS=$T "$G" --threads "$T" --dtype "$dt" --min-ms "${MIN_MS:-100}" --shapes $shapes
  done
done
