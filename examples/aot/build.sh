#!/bin/sh
# Builds and runs examples/aot/mlp_block.c: the bundled model compiled ahead
# of time into a C library (BUILD_DIR/examples/aot/{mlp.h, mlp.c, libmlp.a,
# libmlp.so}), then a program linked against it with plain cc and the flags
# the header names (mlp_LINK_FLAGS: the BLAS, -lm, -lpthread).
# usage: examples/aot/build.sh [BUILD_DIR]   (HLO_AOT_BLAS: the BLAS, as for
#   hlo compile --emit=lib: cblas by default, openblas, dnnl or none)
set -e
B=${1:-build}
O=$B/examples/aot
"$B/hlo" compile examples/models/mlp_block/mlp_block.mlir --emit=lib --name mlp -o "$O"
FLAGS=$(sed -n 's/^#define mlp_LINK_FLAGS "\(.*\)"/\1/p' "$O/mlp.h")
cc -std=c11 -O2 -I"$O" examples/aot/mlp_block.c "$O/libmlp.a" $FLAGS -o "$O/mlp_block"
"$O/mlp_block"
