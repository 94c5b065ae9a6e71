#!/bin/sh
# bench/aot.sh — `hlo compile --emit=lib` libraries against `hlo bench`
# (issue 11; results in bench/AOT.md). For each program: the library is
# emitted and built (BLAS: $AOT_BLAS, default dnnl, the CPU backend's own
# choice; -march=native, as hlo's kernels), tests/aot/driver.c linked
# against libNAME.a and NAME_LINK_FLAGS times NAME_run (2 untimed runs, then
# ITERS timed, the same inputs each run), and `hlo bench --backend cpu
# --iters ITERS` times the same program; the two run interleaved, ROUNDS
# times (the machine is shared: medians move with the load, minimums less).
# Inputs: a model's stored inputs (both read them) or, for ../shared/perf,
# random ones by hlo bench's rule (the driver's own generator). Threads:
# the library gets THREADS (default: the online cores), hlo its default
# (HLO_NUM_THREADS, else the online cores).
# Prints one table row per program: hlo's median and min (the median of the
# rounds' medians, the min of their mins), the library's, and the ratios
# library / hlo (> 1: the library is slower).
# usage: bench/aot.sh [BUILD_DIR] [PROGRAM.mlir...]
#   env: ITERS (default 20), ROUNDS (default 3), THREADS, AOT_BLAS, HLO_SHARED
set -u
B=${1:-build}; [ $# -gt 0 ] && shift
SHARED=${HLO_SHARED:-../shared}
ITERS=${ITERS:-20}; ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-$(nproc)}
BLAS=${AOT_BLAS:-dnnl}
HLO=$B/hlo
[ -x "$HLO" ] || { echo "aot.sh: no $HLO (make BUILD=$B all)"; exit 1; }
mkdir -p "$B/aotbench"
OUT=$(cd "$B/aotbench" && pwd)
export HLO_CACHE_DIR=$(mktemp -d)
trap 'rm -rf "$HLO_CACHE_DIR"' EXIT
if [ $# = 0 ]; then
  set -- "$SHARED/perf/mlp_block_512x1024_f32/mlp_block_512x1024_f32.mlir" \
         "$SHARED/models/tiny_llama_train_step/tiny_llama_train_step.mlir" \
         "$SHARED/perf/llama_block_1x256x256_f32/llama_block_1x256x256_f32.mlir" \
         "$SHARED/perf/naive_attention_1024x64_f32/naive_attention_1024x64_f32.mlir" \
         "$SHARED/models/mlp_block_f32/mlp_block_f32.mlir" \
         "$SHARED/models/softmax_xent/softmax_xent.mlir"
fi
med() { sort -n | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
mn() { sort -n | head -1; }
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); blas $BLAS; threads $THREADS; $ITERS runs x $ROUNDS rounds"
printf '| %-32s | %10s | %10s | %10s | %10s | %6s | %6s |\n' program "hlo med ms" "hlo min ms" "lib med ms" "lib min ms" "med x" "min x"
printf '|%s|%s|%s|%s|%s|%s|%s|\n' ---------------------------------- ------------ ------------ ------------ ------------ -------- --------
for prog in "$@"; do
  dir=$(dirname "$prog"); name=$(basename "$prog" .mlir); name=$(echo "$name" | tr -c 'A-Za-z0-9_\n' _)
  d="$OUT/$name"
  if ! HLO_AOT_BLAS=$BLAS "$HLO" compile "$prog" --emit=lib -o "$d" --name "$name" >"$d.log" 2>&1; then
    printf '| %-32s | %s |\n' "$name" "not embedded: $(grep -m1 error "$d.log" | sed 's/.*error: //' | cut -c1-90)"
    continue
  fi
  flags=$(sed -n "s/^#define ${name}_LINK_FLAGS \"\(.*\)\"/\1/p" "$d/$name.h")
  if ! cc -std=c11 -O2 -DLIB="$name" "-DLIB_H=\"$d/$name.h\"" tests/aot/driver.c "$d/lib$name.a" $flags \
       -o "$d/timer" >"$d/timer.log" 2>&1; then
    printf '| %-32s | %s |\n' "$name" "the timer does not link: $(head -c 90 "$d/timer.log")"
    continue
  fi
  in=-; hin=""
  if [ -d "$dir/inputs" ]; then
    in="$dir/inputs"
    for f in $(ls "$dir/inputs" | sort -V); do hin="$hin --input $dir/inputs/$f"; done
  fi
  : >"$d/hlo.t"; : >"$d/lib.t"
  r=0
  while [ $r -lt "$ROUNDS" ]; do
    "$HLO" bench "$prog" --backend cpu --iters "$ITERS" --json $hin 2>/dev/null |
      python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["median_us"], j["min_us"])' >>"$d/hlo.t"
    "$d/timer" "$in" /tmp "$ITERS" "$THREADS" time >>"$d/lib.t"
    r=$((r + 1))
  done
  hm=$(cut -d' ' -f1 "$d/hlo.t" | med); hn=$(cut -d' ' -f2 "$d/hlo.t" | mn)
  lm=$(cut -d' ' -f1 "$d/lib.t" | med); ln=$(cut -d' ' -f2 "$d/lib.t" | mn)
  awk -v n="$name" -v hm="$hm" -v hn="$hn" -v lm="$lm" -v ln="$ln" 'BEGIN {
    if (hm == "" || lm == "") { printf "| %-32s | %s |\n", n, "a run failed"; exit }
    printf "| %-32s | %10.3f | %10.3f | %10.3f | %10.3f | %6.2f | %6.2f |\n", n, hm / 1e3, hn / 1e3, lm / 1e3, ln / 1e3, lm / hm, ln / hn }'
done
