#!/bin/sh
# tests/gpu/run.sh — the CUDA backend's tests, on a machine with an NVIDIA
# GPU (issue 9). One run builds, tests and prints a table last:
#   1. the build (-O2, BUILD=build/gpu), with the Debian packages it needs
#      unpacked from .debs/ when the machine has none (a GPU machine with no
#      package registry: tools/gpu-debs.sh fetches them on a machine that has
#      one; they are unpacked under /tmp, never over /);
#   2. the CUDA unit tests (test_cuda_backend: the driver, memory, cuBLASLt
#      against host references, kernels; test_cuda_graph_*: the runtime's CUDA
#      graphs and conditional nodes, replayed on the device bit-identical to
#      eager runs; test_cuda_emit: every kernel op
#      compiled by NVRTC; test_cuda_rows: row and elementwise kernels against
#      the interpreter; test_cuda_conv, test_cuda_window, test_cuda_copy,
#      test_cuda_sort: the library-like kernels against host references) and
#      the device-memory runtime test (test_devmem);
#   3. every model of the shared models on --backend cuda against XLA's
#      expected outputs (tests/suite_models.sh: f32 1e-4 in full f32,
#      HLO_CUDA_TF32=0, then 5e-3 with DEFAULT-precision f32 matmuls in TF32,
#      the default, as XLA's; bf16 2e-2,
#      integers exact), and tiny_llama's 3 training steps on cuda;
#   4. the StableHLO conformance corpus on --backend cuda
#      (tests/conformance.sh through a wrapper that adds the flag);
#   5. compute-sanitizer (memcheck) on a few models (CS_MODELS: the names);
#   6. `hlo run --check` (the CPU backend beside the interpreter) on every
#      model, as suite_models does.
# It finds the shared data in ../shared, else ./shared (copy
# ../shared/{models,conformance,perf,tools} there to carry it to a machine
# where ../shared is absent). Logs go to $OUT (default build/gpu/out).
# usage: tests/gpu/run.sh [PART...]   PART: build unit models conformance
#        sanitizer check (default: all). Exit status 1 when anything failed.
#        CONFORMANCE_MATCHING=REGEX runs only the conformance files whose
#        text matches (e.g. 'stablehlo.convolution|reduce_window').
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$(pwd)
B=build/gpu
OUT=${OUT:-$B/out}
mkdir -p "$OUT" "$B"
if [ -d ../shared/models ]; then SHARED=$(cd ../shared && pwd)
elif [ -d shared/models ]; then SHARED=$ROOT/shared
else echo "gpu: no ../shared or ./shared"; exit 1; fi
export HLO_SHARED="$SHARED"
# a private cache: never served from an earlier build's entries
export HLO_CACHE_DIR="$ROOT/$B/cache"
PARTS=${*:-build unit models conformance sanitizer check}
want() { case " $PARTS " in *" $1 "*) return 0;; esac; return 1; }
JOBS=$(nproc 2>/dev/null || echo 4)
rows=""
row() { rows="$rows$(printf '%-34s %8s %8s  %s' "$1" "$2" "$3" "$4")
"; }

# ------------------------------------------------------------------ deps
. tests/gpu/deps.sh

# ----------------------------------------------------------------- build
if want build; then
  start=$(date +%s)
  if make -j"$JOBS" BUILD=$B $MAKEVARS all unit >"$OUT/build.log" 2>&1; then
    row build ok - "$(( $(date +%s) - start )) s"
  else
    tail -n 30 "$OUT/build.log"; row build FAIL - "see build.log"
    printf '%s' "$rows"; exit 1
  fi
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null |
  head -n 1 > "$OUT/gpu.txt"
echo "gpu: $(cat "$OUT/gpu.txt")"

fails=0
count() {  # LABEL LOGFILE: the log's last "N passed, N failed" into the table
  line=$(grep -oE '[0-9]+ passed, [0-9]+ failed' "$2" | tail -n 1)
  p=$(echo "$line" | awk '{print $1}'); f=$(echo "$line" | awk '{print $3}')
  [ -n "$line" ] || { p=0; f=1; }
  [ "$f" = 0 ] || fails=$((fails + 1))
  row "$1" "$p" "$f" "$(basename "$2")"
}

# ------------------------------------------------------------------ unit
if want unit; then
  for t in test_cuda_backend test_cuda_graph_replay test_cuda_graph_cond test_cuda_graph_dag test_cuda_graph_mock test_cuda_emit test_cuda_conv test_cuda_window test_cuda_copy \
           test_cuda_rows test_cuda_sort test_devmem; do
    [ -x "$B/tests/$t" ] || continue
    "$B/tests/$t" >"$OUT/$t.log" 2>&1
    count "$t" "$OUT/$t.log"
  done
fi

# ---------------------------------------------------------------- models
if want models; then
  # full f32 (HLO_CUDA_TF32=0) at the models' own tolerances, then with
  # DEFAULT-precision f32 matmuls in TF32 (the default), f32 within 5e-3
  HLO_CUDA_TF32=0 MODEL_BACKENDS=cuda MODEL_CHECK=0 sh tests/suite_models.sh $B \
    >"$OUT/models.log" 2>&1
  grep -E '^(ok|FAIL)' "$OUT/models.log"
  count "models on cuda (full f32)" "$OUT/models.log"
  HLO_CUDA_TF32=1 MODEL_F32_RTOL=5e-3 MODEL_BACKENDS=cuda MODEL_CHECK=0 sh tests/suite_models.sh $B \
    >"$OUT/models_tf32.log" 2>&1
  grep -E '^FAIL' "$OUT/models_tf32.log"
  count "models on cuda (tf32)" "$OUT/models_tf32.log"
fi

# ----------------------------------------------------------- conformance
if want conformance; then
  W=$B/conformance_cuda
  mkdir -p "$W"
  {
    echo '#!/bin/sh'
    echo "if [ \"\$1\" = run ]; then shift; exec \"$ROOT/$B/hlo\" run --backend cuda \"\$@\"; fi"
    echo "exec \"$ROOT/$B/hlo\" \"\$@\""
  } >"$W/hlo"
  chmod +x "$W/hlo"
  CONF="$SHARED/conformance"
  if [ -n "${CONFORMANCE_MATCHING:-}" ]; then
    # a subset: the files whose text matches this extended regex (the ops a
    # change touched), linked at their own relative paths
    rm -rf "$W/subset"
    (cd "$CONF" && grep -rlE --include='*.mlir' "$CONFORMANCE_MATCHING" .) | while read -r f; do
      mkdir -p "$W/subset/$(dirname "$f")"
      ln -s "$CONF/$f" "$W/subset/$f"
    done
    CONF="$W/subset"
    echo "gpu: conformance on the $(find "$CONF" -name '*.mlir' | wc -l) files matching '$CONFORMANCE_MATCHING'"
  fi
  # the spec's semantics: full f32 (no TF32)
  HLO_CUDA_TF32=0 JOBS=$JOBS TIMEOUT=300 bash tests/conformance.sh "$CONF" "$W" >"$OUT/conformance.log" 2>&1
  tail -n 12 "$OUT/conformance.log"
  line=$(grep '^conformance: ' "$OUT/conformance.log" | tail -n 1)
  p=$(echo "$line" | sed -n 's/^conformance: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p')
  f=$(echo "$line" | sed -n 's/^conformance: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p')
  [ -n "$p" ] || { p=0; f=1; }
  [ "$f" = 0 ] || fails=$((fails + 1))
  row "conformance on cuda" "$p" "$f" conformance.log
fi

# ------------------------------------------------------------- sanitizer
if want sanitizer; then
  CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
  if [ -z "$CS" ]; then
    row "compute-sanitizer" - - "skipped: not installed"
  else
    p=0; f=0
    for m in ${CS_MODELS:-mlp_block_f32 llama_block_bf16 softmax_xent tiny_llama_train_step sort_topk \
             moe_layer while_collatz cond_switch cnn_sgd_step}; do
      d="$SHARED/models/$m"
      [ -d "$d" ] || continue
      n=$(ls "$d/inputs" | wc -l); args=""; i=0
      while [ $i -lt "$n" ]; do args="$args --input $d/inputs/arg$i.npy"; i=$((i + 1)); done
      if "$CS" --tool memcheck --error-exitcode 9 "$B/hlo" run --quiet --backend cuda --no-cache \
           "$d/$m.mlir" $args --output-dir "$B/cs_$m" >"$OUT/cs_$m.log" 2>&1; then
        p=$((p + 1))
      else
        f=$((f + 1)); echo "compute-sanitizer FAIL $m:"; tail -n 15 "$OUT/cs_$m.log"
      fi
    done
    [ $f = 0 ] || fails=$((fails + 1))
    row "compute-sanitizer memcheck" $p $f "cs_*.log"
  fi
fi

# ----------------------------------------------------------------- check
if want check; then
  p=0; f=0
  for prog in "$SHARED"/models/*/*.mlir; do
    d=$(dirname "$prog")
    n=$(ls "$d/inputs" | wc -l); args=""; i=0
    while [ $i -lt "$n" ]; do args="$args --input $d/inputs/arg$i.npy"; i=$((i + 1)); done
    if "$B/hlo" run --quiet "$prog" $args --check >"$OUT/check.log" 2>&1; then p=$((p + 1))
    else f=$((f + 1)); echo "FAIL --check $(basename "$prog"): $(grep -m1 error "$OUT/check.log")"; fi
  done
  [ $f = 0 ] || fails=$((fails + 1))
  row "--check on every model (cpu)" $p $f ""
fi

echo
echo "GPU tests, $(date -u '+%Y-%m-%d %H:%M') UTC, $(cat "$OUT/gpu.txt" 2>/dev/null)"
printf '%-34s %8s %8s  %s\n' part passed failed note
printf '%s' "$rows"
[ $fails = 0 ]
