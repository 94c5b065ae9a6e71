#!/bin/sh
# measure.sh — times every candidate BLAS on the benchmark programs' GEMM
# shapes, one process per library and thread count (bench/BLAS.md has the
# results and the choice made from them).
#
#   sh bench/blas/measure.sh [BUILD] [OUT]     (defaults: build, bench/blas/results.txt)
#
# Builds BUILD/bench/blas/gemm_rate, then runs it for each library in LIBS
# (default: all that gemm_rate knows and this machine has) on 1 and 2
# threads (THREADS), f32 on its default shapes, f64 on F64_SHAPES, bf16
# (bf16 operands, f32 result) on BF16_LIBS. The raw lines go to OUT; the
# pivot table (GFLOP/s, shape x library) is printed by
# `python3 bench/blas/table.py OUT`. Takes about 10 minutes on 2 cores;
# numbers move with other load on the machine: run it on a quiet one, and
# twice. Needs the Debian packages named in bench/BLAS.md.
set -e
BUILD=${1:-build}
OUT=${2:-bench/blas/results.txt}
LIBS=${LIBS:-"ref openblas-pthread openblas-openmp openblas-serial blis-pthread blis-openmp blis-serial onednn onednn-matmul hlo"}
THREADS=${THREADS:-"1 2"}
MIN_MS=${MIN_MS:-150}
F64_SHAPES=${F64_SHAPES:-"1024,1024,1024 512,1024,1024 256,256,256 64,1568,10:nt"}
BF16_LIBS=${BF16_LIBS:-"openblas-pthread onednn onednn-matmul hlo"}
G="$BUILD/bench/blas/gemm_rate"
# (re)build; a tree that does not build now still has the last binary
make --no-print-directory BUILD="$BUILD" "$G" >/dev/null || [ -x "$G" ]
{
  echo "# gemm_rate, $(date -u +%Y-%m-%dT%H:%MZ), $(uname -n), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
  echo "# packages: $(dpkg-query -W -f '${Package}=${Version} ' libblas3 libopenblas0-pthread libopenblas0-openmp libopenblas0-serial libblis4-pthread libblis4-openmp libblis4-serial libdnnl2 2>/dev/null)"
} >"$OUT"
for lib in $LIBS; do
  for t in $THREADS; do
    case "$lib" in *-serial|ref) [ "$t" = 1 ] || continue ;; esac
    max=1e30
    [ "$lib" = ref ] && max=2.5
    export OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t BLIS_NUM_THREADS=$t HLO_NUM_THREADS=$t
    "$G" --lib "$lib" --threads "$t" --min-ms "$MIN_MS" --max-gflop "$max" --verbose >>"$OUT" || echo "# $lib $t f32: exit $?" >>"$OUT"
    "$G" --lib "$lib" --threads "$t" --min-ms "$MIN_MS" --dtype f64 --shapes $F64_SHAPES >>"$OUT" || echo "# $lib $t f64: exit $?" >>"$OUT"
    case " $BF16_LIBS " in
      *" $lib "*) "$G" --lib "$lib" --threads "$t" --min-ms "$MIN_MS" --dtype bf16 --verbose >>"$OUT" || echo "# $lib $t bf16: exit $?" >>"$OUT" ;;
    esac
  done
done
echo "wrote $OUT"
