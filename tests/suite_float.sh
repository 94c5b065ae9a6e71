#!/bin/sh
# Narrow float conversions bit for bit against ml_dtypes
# (tests/float/check_convert.py): every f16/bf16/8/6/4-bit pattern and seeded
# f32/f64 samples, converted by hlo's interpreter (tests/tools/float_convert)
# to every other float type and to/from the integer types, compared with
# numpy/ml_dtypes 0.6.0 (pinned: see MLD below). Installs it with pip when
# missing; without it (no network) prints a visible SKIP and counts nothing.
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
# The ml_dtypes whose rules hlo's converts follow (src/support/float.c):
# 0.6.0 (0.5.x gives the same bits). ml_dtypes 0.7.0 changed them: f64 and
# integers to the narrow types now round once (not through f32), and
# f8E8M0FNU maps values below 2^-127 to 0x00 instead of NaN; hlo keeps the
# older rule until XLA's own converts are checked against the new one. So
# the suite pins 0.6.0, installed beside the build when another is found.
MLD=0.6.0
if ! "$PY" -c "import numpy" >/dev/null 2>&1; then
  echo "float: numpy is missing; running: $PY -m pip install -q numpy"
  if ! "$PY" -m pip install -q numpy >/dev/null 2>&1; then
    echo "float: SKIPPED: 'pip install numpy' failed (no network?)"
    echo "float: 0 passed, 0 failed"
    exit 0
  fi
fi
if ! "$PY" -c "import sys, ml_dtypes; sys.exit(ml_dtypes.__version__ != '$MLD')" >/dev/null 2>&1; then
  dir="$B/pydeps/ml_dtypes-$MLD"
  if ! PYTHONPATH="$dir" "$PY" -c "import sys, ml_dtypes; sys.exit(ml_dtypes.__version__ != '$MLD')" >/dev/null 2>&1; then
    echo "float: running: $PY -m pip install -q --no-deps --target $dir ml_dtypes==$MLD"
    rm -rf "$dir"
    if ! "$PY" -m pip install -q --no-deps --target "$dir" "ml_dtypes==$MLD" >/dev/null 2>&1; then
      echo "float: SKIPPED: 'pip install ml_dtypes==$MLD' failed (no network?)"
      echo "float: 0 passed, 0 failed"
      exit 0
    fi
  fi
  PYTHONPATH="$dir${PYTHONPATH:+:$PYTHONPATH}"
  export PYTHONPATH
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
