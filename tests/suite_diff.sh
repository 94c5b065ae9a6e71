#!/bin/sh
# Differential test against XLA:CPU (tests/diff/difftest.py): re-runs the
# saved regressions in tests/diff/regressions (known failures listed in
# KNOWN.txt are printed, not counted), then ~300 seeded random jax.lax
# programs (fixed seed, 120 s time budget), each run on hlo and compared with
# XLA:CPU's results. Installs jax with pip when it is missing (the version
# the tolerances were tuned on, JAX_VERSION, default 0.10.2); without it
# (no network) the random part prints a visible skip and counts nothing.
# Ends with "diff: N passed, N failed".
# usage: tests/suite_diff.sh [BUILD_DIR]
B=${1:-build}
PY=${PYTHON:-python3}
if ! command -v "$PY" >/dev/null 2>&1; then
  echo "diff: SKIPPED: no $PY"
  echo "diff: 0 passed, 0 failed"
  exit 0
fi
JAX_VERSION=${JAX_VERSION:-0.10.2}
if ! "$PY" -c "import jax, numpy, ml_dtypes" >/dev/null 2>&1; then
  echo "diff: jax is missing; running: $PY -m pip install -q jax==$JAX_VERSION"
  if ! "$PY" -m pip install -q "jax==$JAX_VERSION" >/dev/null 2>&1 &&
     ! "$PY" -m pip install -q jax >/dev/null 2>&1; then
    echo "diff: SKIPPED random cases: 'pip install jax' failed (no network?)"
  fi
fi
exec "$PY" tests/diff/difftest.py --seed 1 --count 300 --time-budget 120 \
  --shrink-budget 15 --hlo "$B/hlo"
