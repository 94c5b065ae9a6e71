#!/bin/sh
# math_ulp.sh BUILD [tanh|exp|logistic|all] [THREADS] — the error of the CPU
# backend's inline f32 math over all 2^32 float inputs (bench/math_ulp.c,
# results in bench/MATH.md). Builds BUILD/bench/math_preamble (prints the
# preamble the generated kernels start with), then compiles math_ulp.c with
# the kernels' compiler flags (src/backend/cpu/jit.c) plus HLO_CC_FLAGS,
# and runs it. A minute or two per function on 2 threads. The printer is
# linked from this tree's emit_c.c and BUILD's libhlo.a (for the rest), so
# it needs only a built BUILD, not a clean rebuild.
set -e
B=${1:?usage: sh bench/math_ulp.sh BUILD [tanh|exp|logistic|all] [THREADS]}
mkdir -p "$B/bench"
${CC:-cc} -std=c11 -D_GNU_SOURCE -O1 -Iinclude -Isrc bench/math_preamble.c \
  src/backend/cpu/emit_c.c "$B/libhlo.a" -o "$B/bench/math_preamble" $(make -s ldlibs)
"$B/bench/math_preamble" > "$B/bench/math_preamble.h"
${CC:-cc} -O2 -fvect-cost-model=dynamic -march=native -fno-math-errno -fno-trapping-math -ffp-contract=off \
  -std=gnu11 $HLO_CC_FLAGS -DHLO_PREAMBLE="\"$(pwd)/$B/bench/math_preamble.h\"" bench/math_ulp.c \
  -o "$B/bench/math_ulp" -lm -pthread
exec "$B/bench/math_ulp" "${2:-all}" "${3:-2}"
