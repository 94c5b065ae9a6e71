#!/bin/sh
# Live check that hlo knows every linear-algebra custom_call target this
# machine's JAX emits (tests/jax/lower_all_linalg.py): every function of
# jnp.linalg, jax.scipy.linalg and jax.lax.linalg lowered for cpu, cuda and
# rocm, each program run through `hlo check`. Needs pip JAX (installed by
# tests/suite_diff.sh, which runs first; installed here when missing); without
# it prints a visible skip and counts nothing (the committed fixtures of
# tests/jax/linalg cover the same targets). Ends "linalg-targets: N passed, N failed".
# usage: tests/suite_linalg_targets.sh [BUILD_DIR]
B=${1:-build}
PY=${PYTHON:-python3}
JAX_VERSION=${JAX_VERSION:-0.10.2}
if ! "$PY" -c "import jax" >/dev/null 2>&1; then
  "$PY" -m pip install -q "jax==$JAX_VERSION" >/dev/null 2>&1 || true
fi
if ! "$PY" -c "import jax" >/dev/null 2>&1; then
  echo "linalg-targets: SKIPPED: cannot import jax ('pip install jax' failed: no network?)"
  echo "linalg-targets: 0 passed, 0 failed"
  exit 0
fi
out=$("$PY" tests/jax/lower_all_linalg.py "$B" 2>&1); rc=$?
printf '%s\n' "$out" | grep -v '^  refused by JAX' | tail -n 30
if [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q '^lower_all_linalg: ok'; then
  echo "linalg-targets: 1 passed, 0 failed"
else
  echo "linalg-targets: 0 passed, 1 failed"; exit 1
fi
