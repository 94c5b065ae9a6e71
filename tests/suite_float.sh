#!/bin/sh
# Narrow float conversions bit for bit against ml_dtypes
# (tests/float/check_convert.py): every f16/bf16/8/6/4-bit pattern and seeded
# f32/f64 samples, converted by hlo's interpreter (tests/tools/float_convert)
# to every other float type and to/from the integer types, compared with
# numpy/ml_dtypes. Installs ml_dtypes with pip when it is missing; without it
# (no network) prints a visible SKIP and counts nothing.
# Ends with "float: N passed, N failed" (one per (from, to) pair).
# usage: tests/suite_float.sh [BUILD_DIR]
B=${1:-build}
PY=${PYTHON:-python3}
TOOL="$B/tests/tools/float_convert"
if [ ! -x "$TOOL" ]; then
  echo "float: $TOOL not built (make BUILD=$B $TOOL)"
  echo "float: 0 passed, 1 failed"
  exit 1
fi
if ! command -v "$PY" >/dev/null 2>&1; then
  echo "float: SKIPPED: no $PY"
  echo "float: 0 passed, 0 failed"
  exit 0
fi
if ! "$PY" -c "import numpy, ml_dtypes" >/dev/null 2>&1; then
  echo "float: ml_dtypes is missing; running: $PY -m pip install -q ml_dtypes"
  if ! "$PY" -m pip install -q ml_dtypes >/dev/null 2>&1; then
    echo "float: SKIPPED: 'pip install ml_dtypes' failed (no network?)"
    echo "float: 0 passed, 0 failed"
    exit 0
  fi
fi
out=$("$PY" tests/float/check_convert.py --tool "$TOOL" 2>&1)
rc=$?
printf '%s\n' "$out" | awk '$4 != 0 || /checked|Error|Traceback/'
last=$(printf '%s\n' "$out" | sed -n 's/^checked [0-9]* pairs: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p')
if [ -z "$last" ]; then
  printf '%s\n' "$out" | tail -5
  echo "float: 0 passed, 1 failed"
  exit 1
fi
set -- $last
echo "float: $1 passed, $2 failed"
[ "$rc" -eq 0 ]
