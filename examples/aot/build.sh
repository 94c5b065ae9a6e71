#!/bin/sh
# Builds and runs examples/aot/mlp_block.c: the bundled model compiled ahead
# of time into a C library (BUILD_DIR/examples/aot/{mlp.h, mlp.c, libmlp.a,
# libmlp.so}), then a program linked against it with plain cc.
# usage: examples/aot/build.sh [BUILD_DIR]   (BLAS: the link flag, default -lblas)
set -e
B=${1:-build}
O=$B/examples/aot
"$B/hlo" compile examples/models/mlp_block/mlp_block.mlir --emit=lib --name mlp -o "$O"
cc -std=c11 -O2 -I"$O" examples/aot/mlp_block.c "$O/libmlp.a" ${BLAS:--lblas} -lm -lpthread \
  -o "$O/mlp_block"
"$O/mlp_block"
