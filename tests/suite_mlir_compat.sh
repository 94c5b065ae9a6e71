#!/bin/sh
# `hlo print` output parses with JAX's MLIR (see tests/mlir_compat.py).
# usage: tests/suite_mlir_compat.sh [BUILD_DIR]; needs jax (tests/suite_diff.sh installs it).
B=${1:-build}
exec python3 tests/mlir_compat.py "$B/hlo" "${HLO_SHARED:-../shared}" 4
