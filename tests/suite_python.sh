#!/bin/sh
# The Python package (python/hlo, docs/python.md): installs it the way users
# do — pip install of the repository root, which builds libhlo.so with this
# Makefile (`make shared` in BUILD_DIR) and the hlo._fast extension — into
# BUILD_DIR/python-pkg, then runs its pytest tests (tests/python) against
# that install: hlo.compile and hlo.jit beside jax.jit, pytrees, static and
# donated arguments, every element type, bad inputs, threads, and hlo.jit
# on the shared models' JAX functions.
# JAX (CPU, from PyPI; JAX_VERSION, default 0.10.2, the version the
# differential test uses), pytest and setuptools are installed once into
# BUILD_DIR/pydeps/python-JAX_VERSION and reused; without them (no network)
# the suite prints a visible SKIP and counts nothing. The -O2 build only
# (run_all.sh runs every tests/suite_*.sh there; not under ASan).
# Ends with "python: N passed, N failed".
# usage: tests/suite_python.sh [BUILD_DIR]
B=${1:-build}
PY=${PYTHON:-python3}
JAX_VERSION=${JAX_VERSION:-0.10.2}
DEPS="$B/pydeps/python-$JAX_VERSION"
PKG="$B/python-pkg"
if ! command -v "$PY" >/dev/null 2>&1; then
  echo "python: SKIPPED: no $PY"
  echo "python: 0 passed, 0 failed"
  exit 0
fi
have_deps() {
  PYTHONPATH="$DEPS" "$PY" -c "import jax, ml_dtypes, pytest, numpy, setuptools, sys; sys.exit(jax.__version__ != '$JAX_VERSION')" \
    >/dev/null 2>&1
}
if ! have_deps; then
  echo "python: running: $PY -m pip install -q --target $DEPS jax==$JAX_VERSION pytest setuptools"
  rm -rf "$DEPS"
  if ! "$PY" -m pip install -q --target "$DEPS" "jax==$JAX_VERSION" pytest setuptools >/dev/null 2>&1 ||
     ! have_deps; then
    echo "python: SKIPPED: 'pip install jax==$JAX_VERSION pytest setuptools' failed (no network?)"
    echo "python: 0 passed, 0 failed"
    exit 0
  fi
fi
fail_setup() {
  printf '%s\n' "$1" | tail -30
  echo "python: $2"
  echo "python: 0 passed, 1 failed"
  exit 1
}
# The install: pip runs setup.py, which runs `make BUILD=$B shared` (nothing
# to do when the library is up to date) and builds hlo._fast.
rm -rf "$PKG"
out=$(PYTHONPATH="$DEPS" HLO_BUILD_DIR="$B" HLO_MAKE_JOBS=${HLO_MAKE_JOBS:-2} \
      "$PY" -m pip install -q --no-deps --no-build-isolation --target "$PKG" . 2>&1) ||
  fail_setup "$out" "pip install . failed"
[ -f "$PKG/hlo/libhlo.so" ] || fail_setup "$out" "pip install . put no libhlo.so in $PKG/hlo"
# libhlo.so exports the hlo_ API only.
if command -v nm >/dev/null 2>&1; then
  extra=$(nm -D --defined-only "$PKG/hlo/libhlo.so" | awk 'NF == 3 && $3 !~ /^hlo_/ {print $3}' | head -5)
  [ -z "$extra" ] || fail_setup "" "libhlo.so exports symbols beside hlo_*: $extra"
fi
pkg_abs=$(cd "$PKG" && pwd)
deps_abs=$(cd "$DEPS" && pwd)
out=$(cd tests/python && PYTHONPATH="$pkg_abs:$deps_abs" \
      "$PY" -m pytest -q -rs -p no:cacheprovider . 2>&1)
rc=$?
printf '%s\n' "$out" | grep -E 'FAILED|ERROR|SKIPPED|Error|passed|failed' | tail -40
summary=$(printf '%s\n' "$out" | grep -E '^=*\s*[0-9]+ (passed|failed|error)' | tail -1)
[ -n "$summary" ] || summary=$(printf '%s\n' "$out" | tail -1)
p=$(printf '%s\n' "$summary" | grep -oE '[0-9]+ passed' | awk '{print $1}')
f=$(printf '%s\n' "$summary" | grep -oE '[0-9]+ (failed|error|errors)' | awk '{s += $1} END {print s + 0}')
p=${p:-0}
if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
  printf '%s\n' "$out" | tail -20
  f=1
fi
echo "python: $p passed, $f failed"
[ "$f" -eq 0 ]
