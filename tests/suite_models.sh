#!/bin/sh
# Model tests: every program in ../shared/models (NAME.mlir and NAME.cpu.mlir)
# runs on hlo from its inputs/ — on the CPU backend (the default), on the
# interpreter (the oracle), and with --check (the interpreter beside every
# compiled step: no step may differ beyond its type's tolerance) — and the
# first two are compared with XLA's expected/ outputs at
# the tolerances of ../shared/models/README.md: f32 1e-4 relative (norm-wise),
# bf16 2e-2, integers and bools exact. random_normal: its threefry bits (the
# uint32 and bool results) bit for bit; its normal values (threefry bits
# through chlo.erf_inv, whose log XLA:CPU computes with its own polynomial)
# within 4 ULP of XLA's. Then
# tiny_llama_train_step runs 3 steps, feeding its outputs back as inputs; the
# loss must fall. Ends with "N passed, N failed".
# usage: tests/suite_models.sh [BUILD_DIR]   (HLO_SHARED overrides ../shared;
#   MODEL_BACKENDS, default "cpu interp", the backends each program runs on;
#   MODEL_CHECK=0 skips the --check runs: tests/gpu/run.sh runs it with cuda;
#   MODEL_CHECK_BACKEND, default cpu, the backend --check compiles for;
#   MODEL_F32_RTOL, default 1e-4, the f32 tolerance: tests/gpu/run.sh
#   gives 5e-3 where cuda runs DEFAULT-precision f32 matmuls in TF32)
B=${1:-build}
SHARED=${HLO_SHARED:-../shared}
M=$SHARED/models
HLO=$B/hlo
CMP=$B/tests/tools/npycmp
OUT=$B/models
pass=0; fail=0
[ -d "$M" ] || { echo "models: no $M"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$OUT"

inputs_of() {  # the --input flags of model dir $1, in argument order
  n=$(ls "$1/inputs" | wc -l)
  i=0; args=""
  while [ $i -lt $n ]; do args="$args --input $1/inputs/arg$i.npy"; i=$((i + 1)); done
  echo "$args"
}

for dir in "$M"/*/; do
  name=$(basename "$dir")
  for prog in "$dir$name.mlir" "$dir$name.cpu.mlir"; do
   [ -f "$prog" ] || continue
   if [ "${MODEL_CHECK:-1}" = 0 ]; then :
   elif "$HLO" run --quiet --backend "${MODEL_CHECK_BACKEND:-cpu}" "$prog" $(inputs_of "$dir") \
          --check >"$OUT/check.log" 2>&1; then
     printf 'ok   %-28s --check\n' "$(basename "$prog" .mlir)"; pass=$((pass + 1))
   else
     echo "FAIL $(basename "$prog" .mlir) --check: $(grep -m1 error "$OUT/check.log" | cut -c1-300)"
     fail=$((fail + 1))
   fi
   for backend in ${MODEL_BACKENDS:-cpu interp}; do
    label=$(basename "$prog" .mlir)
    [ $backend = cpu ] || label="$label.$backend"
    od="$OUT/$label"
    rm -rf "$od"
    start=$(date +%s.%N)
    if ! "$HLO" run --quiet --backend $backend "$prog" $(inputs_of "$dir") --output-dir "$od" >"$OUT/$label.log" 2>&1; then
      echo "FAIL $label: $(grep -m1 error "$OUT/$label.log" | cut -c1-220)"
      fail=$((fail + 1)); continue
    fi
    secs=$(awk "BEGIN{print $(date +%s.%N) - $start}")
    tol=${MODEL_F32_RTOL:-1e-4}; extra=""
    grep -q bfloat16 "$dir/meta.json" && tol=2e-2
    [ "$name" = random_normal ] && extra="--ulp 4"
    ok=1; detail=""
    for exp in "$dir"expected/out*.npy; do
      k=$(basename "$exp")
      r=$("$CMP" "$od/$k" "$exp" --rtol $tol $extra 2>&1) || { ok=0; detail="$detail $k: $r;"; }
    done
    if [ $ok = 1 ]; then
      printf 'ok   %-28s %6.2f s\n' "$label" "$secs"; pass=$((pass + 1))
    else
      echo "FAIL $label:$detail"; fail=$((fail + 1))
    fi
   done
  done
done

# tiny_llama_train_step: 3 steps, outputs 0..33 (params, Adam state, step)
# become inputs 0..33; tokens and targets (inputs 34, 35) stay. On the
# first backend of MODEL_BACKENDS.
T=$M/tiny_llama_train_step
set -- ${MODEL_BACKENDS:-cpu}; train_backend=$1
if [ -d "$T" ]; then
  prev=""; losses=""; ok=1
  for step in 1 2 3; do
    sd="$OUT/train_step$step"; rm -rf "$sd"
    if [ -z "$prev" ]; then args=$(inputs_of "$T")
    else
      args=""; i=0
      while [ $i -lt 34 ]; do args="$args --input $prev/out$i.npy"; i=$((i + 1)); done
      args="$args --input $T/inputs/arg34.npy --input $T/inputs/arg35.npy"
    fi
    if ! "$HLO" run --quiet --backend "$train_backend" "$T/tiny_llama_train_step.mlir" $args --output-dir "$sd" >"$sd.log" 2>&1; then
      ok=0; echo "FAIL train step $step: $(grep -m1 error "$sd.log")"; break
    fi
    loss=$(python3 -c "import sys,struct; d=open('$sd/out34.npy','rb').read(); print(struct.unpack('<f', d[-4:])[0])")
    losses="$losses $loss"; prev=$sd
  done
  if [ $ok = 1 ] && python3 -c "import sys; l=[float(x) for x in '$losses'.split()]; sys.exit(0 if len(l)==3 and l[0]>l[1]>l[2] else 1)"; then
    echo "ok   tiny_llama 3 train steps on $train_backend, loss:$losses"; pass=$((pass + 1))
  else
    echo "FAIL tiny_llama 3 train steps, loss:$losses (must fall)"; fail=$((fail + 1))
  fi
fi
echo "models: $pass passed, $fail failed"
[ $fail -eq 0 ]
