#!/bin/sh
# math_kernel_time.sh OUT NAME TILES NBUF BYTES RUNS ROUNDS A.c [B.c ...] —
# compiles each kernel unit (from `hlo bench FILE --dump-to DIR`: DIR/kN.c)
# with the kernels' flags (src/backend/cpu/jit.c) plus $HLO_CC_FLAGS into
# OUT/, and times function NAME of each on one thread, alternating
# (bench/math_kernel_time.c; bench/MATH.md).
set -e
O=${1:?usage: sh bench/math_kernel_time.sh OUT NAME TILES NBUF BYTES RUNS ROUNDS A.c [B.c ...]}
N=$2 T=$3 NB=$4 BY=$5 RU=$6 RO=$7
shift 7
mkdir -p "$O"
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 bench/math_kernel_time.c -o "$O/math_kernel_time" -ldl
i=0 sos=""
for c in "$@"; do
  i=$((i + 1))
  ${CC:-cc} -O2 -fvect-cost-model=dynamic -march=native -fPIC -shared -fno-math-errno -fno-trapping-math \
    -ffp-contract=off -std=gnu11 $HLO_CC_FLAGS "$c" -o "$O/k$i.so" -lm
  sos="$sos $O/k$i.so"
done
exec "$O/math_kernel_time" "$N" "$T" "$NB" "$BY" "$RU" "$RO" $sos
