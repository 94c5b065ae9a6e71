#!/bin/sh
# bench/gpu.sh — hlo's CUDA backend against XLA on the same GPU, in one run
# (issue 9), on a machine with an NVIDIA GPU and JAX's CUDA plugin:
#   - the ceilings, measured first in the same run: a large device-to-device
#     copy (TB/s, bytes read + written) and a large bf16 matrix product
#     (TFLOP/s), through PyTorch when it is there;
#   - for each program of ../shared/perf without a custom call (then the
#     shared models): XLA (`../shared/tools/xla_run.py --platform cuda`,
#     which also saves the inputs it drew) and `hlo bench --backend cuda` on
#     those very inputs: medians, hlo/XLA, hlo's achieved TFLOP/s (FLOPs from
#     `hlo cost`, which counts matmuls; XLA's GPU cost analysis leaves out the
#     ones it hands to cuBLAS) and TB/s (hlo cost's bytes accessed) against
#     the ceilings, XLA's compile, hlo's cold compile (an empty cache) and
#     warm compile (the second process, a cache hit), and peak device
#     memory: `hlo memory --backend cuda`'s peak (arguments + results + the
#     arena + interpreter temporaries) against XLA's argument + output -
#     alias + temp bytes (its compiled memory stats), in MiB, and their ratio.
# Prints a table last; keep the latest in bench/results/gpu.md.
# It finds the shared data in ../shared, else ./shared, and hlo in
# build/gpu/hlo (tests/gpu/run.sh builds it; `sh tests/gpu/run.sh build`).
# usage: bench/gpu.sh [PROGRAM_NAME...]   (default: every perf program, then
#        every model). Env: ITERS (default 20), PER_PROGRAM_S (default 120).
set -u
cd "$(dirname "$0")/.." || exit 1
if [ -d ../shared/perf ]; then SHARED=$(cd ../shared && pwd); else SHARED=$(pwd)/shared; fi
HLO=build/gpu/hlo
. tests/gpu/deps.sh  # the libraries hlo was linked with, where .debs/ gave them
[ -x "$HLO" ] || { echo "gpu bench: no $HLO (sh tests/gpu/run.sh build)"; exit 1; }
ITERS=${ITERS:-20}
LIMIT=${PER_PROGRAM_S:-120}
W=$(mktemp -d "${TMPDIR:-/tmp}/hlo_gpu_bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
jget() { python3 -c "import json,sys; d=json.load(open('$1')); v=d
for k in '$2'.split('.'):
    v = v.get(k) if isinstance(v, dict) else None
print('' if v is None else v)" 2>/dev/null; }

ceil=$(python3 - <<'PY' 2>/dev/null
import torch
t = torch.cuda
x = torch.empty(2 << 30, dtype=torch.uint8, device="cuda"); y = torch.empty_like(x)
for _ in range(3): y.copy_(x)
t.synchronize(); s = t.Event(enable_timing=True); e = t.Event(enable_timing=True)
s.record()
for _ in range(10): y.copy_(x)
e.record(); t.synchronize()
tbs = 2 * x.numel() * 10 / (s.elapsed_time(e) / 1e3) / 1e12
a = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda"); b = torch.randn_like(a)
for _ in range(3): a @ b
t.synchronize(); s.record()
for _ in range(10): a @ b
e.record(); t.synchronize()
tf = 2 * 8192 ** 3 * 10 / (s.elapsed_time(e) / 1e3) / 1e12
print(f"{tbs:.2f} {tf:.0f}")
PY
)
TBS=$(echo "$ceil" | awk '{print $1}'); TFS=$(echo "$ceil" | awk '{print $2}')
echo "ceilings: device-to-device copy ${TBS:-?} TB/s, bf16 8192^3 matmul ${TFS:-?} TFLOP/s"

progs=""
if [ $# -gt 0 ]; then
  for n in "$@"; do
    for p in "$SHARED"/perf/"$n"/"$n".mlir "$SHARED"/models/"$n"/"$n".mlir; do [ -f "$p" ] && progs="$progs $p"; done
  done
else
  for p in "$SHARED"/perf/*/*.mlir "$SHARED"/models/*/*.mlir; do
    case "$p" in *.cpu.mlir) continue;; esac
    grep -q custom_call "$p" && continue
    progs="$progs $p"
  done
fi

rows=""
for p in $progs; do
  name=$(basename "$p" .mlir)
  d="$W/$name"; mkdir -p "$d/in" "$d/cache"
  timeout "$LIMIT" python3 "$SHARED/tools/xla_run.py" "$p" --platform cuda --iters "$ITERS" \
    --save-inputs "$d/in" --json > "$d/xla.json" 2>"$d/xla.err" || true
  n=$(ls "$d/in" 2>/dev/null | wc -l); args=""; i=0
  while [ $i -lt "$n" ]; do args="$args --input $d/in/arg$i.npy"; i=$((i + 1)); done
  "$HLO" cost "$p" --json > "$d/cost.json" 2>/dev/null || true
  "$HLO" memory "$p" --backend cuda --json > "$d/mem.json" 2>/dev/null || true
  note=""
  for run in cold warm; do
    if ! timeout "$LIMIT" "$HLO" bench "$p" $args --backend cuda --iters "$ITERS" --warmup 3 --json \
         --cache-dir "$d/cache" > "$d/$run.json" 2>"$d/$run.err"; then
      note="hlo: $(grep -m1 -i 'error' "$d/$run.err" | cut -c1-80)"; break
    fi
  done
  xm=$(jget "$d/xla.json" median_us); xc=$(jget "$d/xla.json" compile_s)
  hm=$(jget "$d/warm.json" median_us); hc=$(jget "$d/cold.json" compile_ms); hw=$(jget "$d/warm.json" compile_ms)
  fl=$(jget "$d/cost.json" flops); by=$(jget "$d/cost.json" "bytes accessed")
  hp=$(jget "$d/mem.json" peak_bytes)
  xp=$(python3 -c "import json; d=json.load(open('$d/xla.json')); print(d['argument_bytes'] + d['output_bytes'] - d['alias_bytes'] + d['temp_bytes'])" 2>/dev/null)
  [ -n "$xm" ] || note="${note:+$note; }xla: $(tail -n 1 "$d/xla.err" | cut -c1-60)"
  row=$(awk -v n="$name" -v hm="$hm" -v xm="$xm" -v fl="$fl" -v by="$by" -v xc="$xc" -v hc="$hc" \
        -v hw="$hw" -v hp="$hp" -v xp="$xp" -v note="$note" 'BEGIN {
    r = (hm != "" && xm != "" && xm > 0) ? sprintf("%.2f", hm / xm) : "-"
    tf = (hm != "" && hm > 0 && fl != "") ? sprintf("%.1f", fl / hm / 1e6) : "-"
    tb = (hm != "" && hm > 0 && by != "") ? sprintf("%.2f", by / hm / 1e6) : "-"
    mr = (hp != "" && xp != "" && xp > 0) ? sprintf("%.2f", hp / xp) : "-"
    printf "%-32s %10s %10s %7s %8s %7s %9s %9s %8s %9s %9s %6s  %s", n, hm == "" ? "-" : sprintf("%.1f", hm),
      xm == "" ? "-" : sprintf("%.1f", xm), r, tf, tb, xc == "" ? "-" : sprintf("%.0f", xc * 1000),
      hc == "" ? "-" : sprintf("%.0f", hc), hw == "" ? "-" : sprintf("%.1f", hw),
      hp == "" ? "-" : sprintf("%.2f", hp / 1048576), xp == "" ? "-" : sprintf("%.2f", xp / 1048576), mr, note }')
  echo "$row"
  rows="$rows$row
"
done
echo
echo "hlo --backend cuda vs XLA (jax $(python3 -c 'import jax; print(jax.__version__)' 2>/dev/null)), $(date -u '+%Y-%m-%d %H:%M') UTC, $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"
echo "ceilings measured in this run: copy ${TBS:-?} TB/s, bf16 matmul ${TFS:-?} TFLOP/s; times in us, compile in ms"
printf '%-32s %10s %10s %7s %8s %7s %9s %9s %8s %9s %9s %6s  %s\n' program "hlo us" "XLA us" hlo/XLA TFLOP/s TB/s "XLA comp" "hlo cold" "hlo warm" "hlo MiB" "XLA MiB" mem note
printf '%s' "$rows"
