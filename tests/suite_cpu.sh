#!/bin/sh
# CPU backend suite: everything the other suites check, run on
# `hlo run --backend cpu` (kernels compiled from generated C, BLAS calls,
# interpreter thunks for the rest):
#   1. every model of ../shared/models (NAME.mlir and NAME.cpu.mlir) with its
#      inputs, compared with XLA's expected/ outputs at the models' tolerances
#      (as tests/suite_models.sh: f32 1e-4 relative, bf16 2e-2, integers
#      exact; random_normal 4 ULP), twice: `--passes none` (a kernel or
#      thunk per op) and `--passes cpu` (the CPU pipeline: hlo.fusion ops,
#      a kernel each), each row with its median run time (`hlo bench`, 5
#      runs) and the interpreter's;
#   2. the WHOLE conformance corpus (tests/conformance.sh: every file, each
#      treated as that suite treats it) with
#      `--passes inline,chlo-legalize,simplify,cse,dce,fusion` (the CPU
#      pipeline without constant folding, so the fused kernels compute what
#      the check ops compare; tests/suite_conformance.sh runs the corpus
#      with the default `--passes cpu`, which folds most constant inputs);
#   3. on request (HLO_CPU_PARTS=jax) every JAX fixture (tests/suite_jax.sh)
#      with `--passes cpu` and the statistics (suite_jax.sh runs them on
#      the default backend anyway).
# Parts 2 and 3 call those suites with `hlo` replaced by a wrapper
# (OUT/hlo_cpu) that adds the flags to `hlo run`, keeps the per-program
# statistics line (`cpu: N ops -> K kernels, B BLAS calls, ...`) and
# appends it to OUT/stats.PART. Each part prints its counts, how many ops
# became kernels, BLAS calls and interpreter thunks, and the ops that ran on
# the interpreter (the reasons they were not compiled: ops the kernels do
# not lower — scatter, sort, convolution, complex or f8 types, ...), most
# frequent first.
#
# HLO_SUITE_UBSAN=1 compiles every kernel with -fsanitize=undefined,
# float-cast-overflow -fno-sanitize-recover=all (a wrapper around $HLO_CC or
# cc): generated C with undefined behaviour on the corpus's values fails.
# HLO_CPU_PARTS="models conformance jax" picks parts (default: models conformance).
# The kernel cache (HLO_CACHE_DIR) makes a second run much faster; the first
# run's time is the C compiler's (bench/KERNELS.md has both).
# Without a C compiler ($HLO_CC, else cc) it prints SKIP and passes.
# Ends with "N passed, N failed".
# usage: tests/suite_cpu.sh [BUILD_DIR]   (HLO_SHARED overrides ../shared)
cd "$(dirname "$0")/.." || exit 1
B=${1:-build}
SHARED=${HLO_SHARED:-../shared}
M=$SHARED/models
CONF=$SHARED/conformance
HLO=$B/hlo
CMP=$B/tests/tools/npycmp
OUT=$B/suite_cpu
PARTS=${HLO_CPU_PARTS:-models conformance}
pass=0; fail=0
rm -rf "$OUT"; mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cc_name=${HLO_CC:-cc}
if ! command -v "$cc_name" >/dev/null 2>&1; then
  echo "SKIP suite_cpu: no C compiler ('$cc_name' not found; set HLO_CC): the cpu backend cannot compile kernels"
  echo "0 passed, 0 failed"
  exit 0
fi
[ -x "$HLO" ] && [ -x "$CMP" ] || { echo "suite_cpu: $HLO or $CMP not built"; echo "0 passed, 1 failed"; exit 1; }
REAL_HLO=$(cd "$(dirname "$HLO")" && pwd)/hlo
if [ "${HLO_SUITE_UBSAN:-0}" = 1 ]; then
  cat >"$OUT/cc_ubsan" <<EOF
#!/bin/sh
exec $cc_name "\$@" -fsanitize=undefined,float-cast-overflow -fno-sanitize-recover=all
EOF
  chmod +x "$OUT/cc_ubsan"
  HLO_CC=$OUT/cc_ubsan; export HLO_CC
  echo "kernels compiled with UBSan ($OUT/cc_ubsan)"
fi
start_all=$(date +%s)

# The wrapper: `hlo_cpu run ARGS` runs `hlo run $HLO_CPU_FLAGS ARGS` without
# --quiet (the statistics line is printed then), stdout and stderr kept
# apart, and appends the statistics lines to $HLO_CPU_STATS.
cat >"$OUT/hlo_cpu" <<EOF
#!/bin/sh
H=$REAL_HLO
if [ "\$1" != run ]; then exec "\$H" "\$@"; fi
shift
for a in "\$@"; do shift; [ "\$a" = --quiet ] || set -- "\$@" "\$a"; done
t=\$(mktemp -d "\${TMPDIR:-/tmp}/hlo_cpu.XXXXXX") || exit 1
"\$H" run \$HLO_CPU_FLAGS "\$@" >"\$t/o" 2>"\$t/e"
rc=\$?
cat "\$t/o"; cat "\$t/e" >&2
[ -n "\$HLO_CPU_STATS" ] && grep -h 'cpu: [0-9]* ops ->' "\$t/e" >>"\$HLO_CPU_STATS"
rm -rf "\$t"
exit \$rc
EOF
chmod +x "$OUT/hlo_cpu"
# a build folder for suite_jax.sh: hlo is the wrapper, npycmp the real one
mkdir -p "$OUT/jaxb/tests/tools"
ln -sf "$OUT/hlo_cpu" "$OUT/jaxb/hlo"
ln -sf "$(cd "$(dirname "$CMP")" && pwd)/npycmp" "$OUT/jaxb/tests/tools/npycmp"

# "ops kernels blas interp" summed over the statistics lines of file $1
stats_sum() {
  awk '/cpu: [0-9]+ ops ->/ { for (i = 1; i <= NF; i++) {
         if ($(i+1) == "ops") o += $i; if ($(i+1) == "kernels,") k += $i;
         if ($(i+1) == "BLAS") b += $i; if ($(i+1) == "interpreter") t += $i } }
       END { printf "%d %d %d %d", o, k, b, t }' "$1"
}
# the ops of the interpreter thunks in file $1, counted, most frequent first
interp_summary() {
  sed -n 's/.*; interpreter: //p' "$1" | tr ',' '\n' | sed 's/^ *//; s/ *$//' | grep . |
    awk '{ n = 1; if ($NF ~ /^x[0-9]+$/) { n = substr($NF, 2); $NF = "" } sub(/ +$/, "");
           c[$0] += n } END { for (k in c) printf "%d %s\n", c[k], k }' | sort -rn |
    awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $1 } NR == 40 { printf ", ..."; exit }'
}
report_stats() {  # LABEL FILE
  set -- "$1" "$2" $(stats_sum "$2")
  printf '  %s: %d programs; %d ops -> %d kernels, %d BLAS calls, %d interpreter thunks\n' "$1" \
    "$(grep -c . "$2")" "$3" "$4" "$5" "$6"
  printf '  interpreter thunks (ops the kernels do not take): %s\n' "$(interp_summary "$2")"
}

# ------------------------------------------------------------------ models
inputs_of() {  # the --input flags of model dir $1, in argument order
  n=$(ls "$1/inputs" | wc -l)
  i=0; args=""
  while [ $i -lt $n ]; do args="$args --input $1/inputs/arg$i.npy"; i=$((i + 1)); done
  echo "$args"
}
# "ops kernels blas interp compile_ms" of the statistics line of log $1
stats_of() {
  awk '/cpu: [0-9]+ ops ->/ { for (i = 1; i <= NF; i++) {
         if ($(i+1) == "ops") o += $i; if ($(i+1) == "kernels,") k += $i;
         if ($(i+1) == "BLAS") b += $i; if ($(i+1) == "interpreter") t += $i;
         if ($(i+1) ~ /^ms/) c += $i } }
       END { printf "%d %d %d %d %.0f", o, k, b, t, c }' "$1"
}
# median run ms of `hlo bench` (5 runs) with args $@
bench_ms() {
  "$HLO" bench --iters 5 --warmup 1 --json "$@" 2>/dev/null |
    sed -n 's/.*"median_us": \([0-9.]*\).*/\1/p' | awk '{ printf "%.2f", $1 / 1000 }'
}
interp_ops_of() { sed -n 's/.*; interpreter: //p' "$1" | head -1 | cut -c1-60; }
row() {  # status program stats-line cpu_ms interp_ms interp-ops
  ops=$6
  set -- "$1" "$2" $3 "$4" "$5"
  printf '%-4s %-30s %4s -> %4s / %3s / %3s %7s %9s %9s  %s\n' "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" "$ops"
}

if echo "$PARTS" | grep -q models; then
  t0=$(date +%s); mp=$pass; mf=$fail
  echo "== models: --backend cpu, --passes none and --passes cpu (+fusion)"
  [ -d "$M" ] || { echo "FAIL models: no $M"; fail=$((fail + 1)); }
  printf '%-4s %-30s %4s    %4s   %3s   %3s %7s %9s %9s  %s\n' "" program ops kern blas intp "cc ms" "cpu ms" "interp ms" "interpreter thunks"
  for dir in "$M"/*/; do
    [ -d "$dir" ] || continue
    name=$(basename "$dir")
    for prog in "$dir$name.mlir" "$dir$name.cpu.mlir"; do
      [ -f "$prog" ] || continue
      ins=$(inputs_of "$dir")
      tol=1e-4; extra=""
      grep -q bfloat16 "$dir/meta.json" && tol=2e-2
      [ "$name" = random_normal ] && extra="--ulp 4"
      for mode in none cpu; do
        label=$(basename "$prog" .mlir)
        [ $mode = cpu ] && label="$label +fusion"
        tag=$(echo "$label" | tr ' +' '__')
        od="$OUT/$tag"
        if ! "$HLO" run --backend cpu --passes $mode "$prog" $ins --output-dir "$od" >"$OUT/$tag.log" 2>&1; then
          echo "FAIL $label: $(grep -m1 error "$OUT/$tag.log" | cut -c1-220)"
          fail=$((fail + 1)); continue
        fi
        grep -h 'cpu: [0-9]* ops ->' "$OUT/$tag.log" >>"$OUT/stats.models"
        ok=1; detail=""
        for exp in "$dir"expected/out*.npy; do
          k=$(basename "$exp")
          r=$("$CMP" "$od/$k" "$exp" --rtol $tol $extra 2>&1) || { ok=0; detail="$detail $k: $r;"; }
        done
        st=ok
        if [ $ok = 1 ]; then pass=$((pass + 1)); else st=FAIL; fail=$((fail + 1)); fi
        cms=$(bench_ms --backend cpu --passes $mode "$prog" $ins)
        ims="-"
        [ $mode = none ] && ims=$(bench_ms --backend interp "$prog" $ins)
        row $st "$label" "$(stats_of "$OUT/$tag.log")" "$cms" "$ims" "$(interp_ops_of "$OUT/$tag.log")"
        [ $ok = 1 ] || echo "     $label:$detail"
      done
    done
  done
  [ -f "$OUT/stats.models" ] && report_stats "models" "$OUT/stats.models"
  echo "models: $((pass - mp)) passed, $((fail - mf)) failed ($(( $(date +%s) - t0 )) s)"
fi

# ------------------------------------------------------------- conformance
conformance_run() {  # TAG FLAGS
  tag=$1; flags=$2; t0=$(date +%s)
  echo "== conformance: --backend cpu $flags"
  mkdir -p "$OUT/conf_$tag"
  : >"$OUT/stats.conf_$tag"
  HLO_BIN="$OUT/hlo_cpu" HLO_CPU_FLAGS="--backend cpu $flags" HLO_CPU_STATS="$OUT/stats.conf_$tag" \
    bash tests/conformance.sh "$CONF" "$OUT/conf_$tag" >"$OUT/conf_$tag.txt" 2>&1
  sed -n '/^folder/,/^total/p; /^failures:/,$p' "$OUT/conf_$tag.txt" | grep -v '^conformance:'
  line=$(grep '^conformance: ' "$OUT/conf_$tag.txt" | tail -1)
  p=$(echo "$line" | sed -n 's/^conformance: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p')
  f=$(echo "$line" | sed -n 's/^conformance: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p')
  [ -n "$p" ] || { p=0; f=1; echo "FAIL conformance ($tag): no summary line"; tail -n 5 "$OUT/conf_$tag.txt"; }
  pass=$((pass + p)); fail=$((fail + f))
  report_stats "conformance $tag" "$OUT/stats.conf_$tag"
  echo "conformance ($tag): $p passed, $f failed ($(( $(date +%s) - t0 )) s)"
}
if echo "$PARTS" | grep -q conformance; then
  if [ -d "$CONF" ]; then
    # (the corpus with the default `--passes cpu` is tests/suite_conformance.sh's run)
    conformance_run nofold "--passes inline,chlo-legalize,simplify,cse,dce,fusion"
  else
    echo "SKIP conformance: no $CONF"
  fi
fi

# --------------------------------------------------------------------- jax
if echo "$PARTS" | grep -q jax; then
  t0=$(date +%s)
  echo "== jax fixtures: --backend cpu --passes cpu"
  : >"$OUT/stats.jax"
  HLO_CPU_FLAGS="--backend cpu --passes cpu" HLO_CPU_STATS="$OUT/stats.jax" \
    sh tests/suite_jax.sh "$OUT/jaxb" >"$OUT/jax.txt" 2>&1
  grep -v '^ok' "$OUT/jax.txt" | grep -v '^jax: '
  line=$(grep '^jax: ' "$OUT/jax.txt" | tail -1)
  p=$(echo "$line" | sed -n 's/^jax: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p')
  f=$(echo "$line" | sed -n 's/^jax: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p')
  [ -n "$p" ] || { p=0; f=1; echo "FAIL jax: no summary line"; tail -n 5 "$OUT/jax.txt"; }
  pass=$((pass + p)); fail=$((fail + f))
  report_stats "jax" "$OUT/stats.jax"
  echo "jax: $p passed, $f failed ($(( $(date +%s) - t0 )) s)"
fi

echo "suite_cpu took $(( $(date +%s) - start_all )) s"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
