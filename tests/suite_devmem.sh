#!/bin/sh
# The executable's device-memory path without a GPU: `--backend cpu-devmem`
# (backend_cpu_devmem: the CPU backend with device_memory = true, poisoned
# allocations, copies through the backend; runtime/executable_cpu_device.c)
# on every conformance file (as tests/suite_conformance.sh runs them on the
# CPU backend: tests/conformance.sh, same pass criteria and known failures)
# and every model of ../shared/models (as tests/suite_models.sh: XLA's
# expected outputs at the README's tolerances, then --check). Then
# `hlo run --backend cuda` on a machine without a driver must exit 1 with a
# one-line message. Prints a table; ends with "N passed, N failed".
# usage: tests/suite_devmem.sh [BUILD_DIR]   (HLO_SHARED overrides ../shared;
#        DEVMEM_SKIP_CONFORMANCE=1 runs only the models and the cuda check)
B=${1:-build}
SHARED=${HLO_SHARED:-../shared}
CONF=$SHARED/conformance
HLO=$B/hlo
OUT=$B/devmem
pass=0; fail=0
[ -x "$HLO" ] || { echo "devmem: $HLO not built"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$OUT"
ABS=$(cd "$B" && pwd)
CACHE=$(mktemp -d)
export HLO_CACHE_DIR="$CACHE"
trap 'rm -rf "$CACHE"' EXIT

# ---- conformance: a wrapper whose `run` is `run --backend cpu-devmem`
if [ "${DEVMEM_SKIP_CONFORMANCE:-0}" != 1 ]; then
  mkdir -p "$OUT/conf"
  {
    echo '#!/bin/sh'
    echo "if [ \"\$1\" = run ]; then shift; exec \"$ABS/hlo\" run --backend cpu-devmem \"\$@\"; fi"
    echo "exec \"$ABS/hlo\" \"\$@\""
  } >"$OUT/conf/hlo"
  chmod +x "$OUT/conf/hlo"
  echo "== conformance on cpu-devmem"
  out=$(bash tests/conformance.sh "$CONF" "$OUT/conf" 2>&1)
  printf '%s\n' "$out" | tail -n 25
  line=$(printf '%s\n' "$out" | grep '^conformance: ' | tail -n 1)
  p=$(echo "$line" | sed -n 's/^conformance: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p')
  f=$(echo "$line" | sed -n 's/^conformance: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p')
  [ -n "$p" ] || { p=0; f=1; echo "conformance on cpu-devmem: no summary line"; }
  pass=$((pass + p)); fail=$((fail + f))
fi

# ---- models: tests/suite_models.sh on cpu-devmem (XLA's expected outputs,
# --check with every device step beside the interpreter, 3 training steps)
echo "== models on cpu-devmem"
out=$(MODEL_BACKENDS=cpu-devmem MODEL_CHECK_BACKEND=cpu-devmem sh tests/suite_models.sh "$B" 2>&1)
printf '%s\n' "$out" | grep -E '^(ok|FAIL)'
line=$(printf '%s\n' "$out" | grep -oE '[0-9]+ passed, [0-9]+ failed' | tail -n 1)
p=$(echo "$line" | awk '{print $1}'); f=$(echo "$line" | awk '{print $3}')
[ -n "$line" ] || { p=0; f=1; echo "FAIL models: no summary line"; }
pass=$((pass + p)); fail=$((fail + f))

# ---- --backend cuda without a driver: exit 1, one clear line
echo "== --backend cuda"
P=$OUT/one.mlir
printf 'func.func @main(%%a: tensor<4xf32>) -> tensor<4xf32> {\n  %%0 = stablehlo.add %%a, %%a : tensor<4xf32>\n  return %%0 : tensor<4xf32>\n}\n' >"$P"
if [ -e /proc/driver/nvidia/version ] || ls /dev/nvidia0 >/dev/null 2>&1; then
  echo "skip --backend cuda: this machine has an NVIDIA driver"
else
  "$HLO" run --backend cuda --arg 'dense<1.0> : tensor<4xf32>' "$P" >"$OUT/cuda.out" 2>"$OUT/cuda.err"
  rc=$?
  lines=$(wc -l <"$OUT/cuda.err")
  if [ $rc -eq 1 ] && [ "$lines" -eq 1 ] && grep -qi 'cuda\|nvidia\|driver' "$OUT/cuda.err"; then
    printf 'ok   %-30s %s\n' "run --backend cuda" "exit 1: $(cut -c1-120 "$OUT/cuda.err")"
    pass=$((pass + 1))
  else
    echo "FAIL run --backend cuda: exit $rc, $lines lines: $(head -c 300 "$OUT/cuda.err")"
    fail=$((fail + 1))
  fi
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
