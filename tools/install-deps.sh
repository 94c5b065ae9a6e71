#!/bin/sh
# Installs the Debian packages hlo's build and tests need, when missing.
# Runs as root (as on the project's machines) or through sudo.
set -e
need=""
# BLAS/LAPACK (bench/BLAS.md says why these): OpenBLAS's OpenMP build, linked
# by path (the runtime package is enough), and oneDNN (its -dev package: the
# link name libdnnl.so and the header bench/blas/gemm_rate.c uses).
# pkg-config: tests/suite_install.sh builds examples/run_model.c with its flags alone.
for p in gcc make libopenblas0-openmp libdnnl-dev libxxhash-dev python3 pkg-config; do
  dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
if [ -n "$need" ]; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "installing:$need"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need
fi
# numpy, in the python3 the tests run (often not Debian's: pyenv, a venv), for
# the suites that compare results with it (tests/aot/compare.py, suite_float,
# suite_python); from PyPI, as tests/suite_float.sh already did for itself
if ! python3 -c "import numpy" >/dev/null 2>&1; then
  echo "installing: numpy (python3 -m pip install numpy)"
  python3 -m pip install -q numpy || echo "install-deps: pip install numpy failed; the suites that need it say so"
fi
