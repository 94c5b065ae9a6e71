#!/bin/sh
# suite_cost_dynamic.sh — `hlo cost` on programs with dynamic shapes ('?'
# dims): given the inputs (--input A.npy / --arg LITERAL, as `hlo run` takes
# them) the program is refined to their shapes and then counted; without
# them, or with inputs that do not fit, it fails with a clear message and
# exit 1 (usage errors exit 2; never >= 128, a crash). The programs and
# inputs are the committed JAX fixtures of tests/jax/dynamic (JAX's
# shape-polymorphic export). Every expected count is worked out by hand in
# the comment beside it, the way XLA's cost_analysis() counts (a dot_general
# 2*M*N*K flops, an elementwise op one flop per element, tanh one
# transcendental per element; bytes = 4 per f32 element read or written);
# for mlp the dynamic program is also checked against the same program made
# static by writing its shapes in. Prints "cost-dynamic: N passed, N failed".
# Usage: tests/suite_cost_dynamic.sh [BUILD_DIR]   (default build; uses BUILD_DIR/hlo)
cd "$(dirname "$0")/.." || exit 1
B=${1:-build}
HLO=$B/hlo
pass=0; fail=0
if [ ! -x "$HLO" ]; then
  echo "cost-dynamic: $HLO not built"; echo "cost-dynamic: 0 passed, 1 failed"; exit 1
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/hlo_costdyn.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
J=tests/jax/dynamic

# expect NAME WANT_RC REGEX CMD...: runs CMD (stdout+stderr captured); passes
# when the exit status is WANT_RC, the output matches the extended REGEX and
# shows no sanitizer report.
expect() {
  name=$1; want=$2; re=$3; shift 3
  out=$("$@" 2>&1); rc=$?
  if [ $rc -ge 128 ] || printf '%s\n' "$out" | grep -Eq 'ERROR: (Address|Leak)Sanitizer|runtime error:'; then
    fail=$((fail + 1)); echo "FAIL $name: CRASH (exit $rc): $*"; printf '%s\n' "$out" | tail -n 8
  elif [ "$rc" != "$want" ]; then
    fail=$((fail + 1)); echo "FAIL $name: exit $rc, want $want: $*"; printf '%s\n' "$out" | tail -n 8
  elif ! printf '%s\n' "$out" | grep -Eq -- "$re"; then
    fail=$((fail + 1)); echo "FAIL $name: output does not match /$re/: $*"
    printf '%s\n' "$out" | tail -n 8
  else
    pass=$((pass + 1))
  fi
}

# inputs CASE: the --input flags of a fixture's inputs/argK.npy, in order.
inputs() {
  n=$(ls "$J/$1/inputs" | wc -l); i=0; r=""
  while [ $i -lt "$n" ]; do r="$r --input $J/$1/inputs/arg$i.npy"; i=$((i + 1)); done
  printf '%s' "$r"
}

# ------------------------------------------------- counts for given inputs
# mlp: tanh(x @ w1) @ w2 with x (b, 3), w1 (3, 4), w2 (4, 2).
#   flops = 2*b*3*4 + 2*b*4*2 = 40b; transcendentals (tanh) = 4b;
#   bytes = dot1 4*(3b + 12 + 4b) + tanh 4*(4b + 4b) + dot2 4*(4b + 8 + 2b)
#         = (28b + 48) + 32b + (24b + 32) = 84b + 80.
#   b = 1: 40 4 164;  b = 3: 120 12 332;  b = 7: 280 28 668.
# shellcheck disable=SC2046
expect mlp-1 0 '^TOTAL - 40 4 164$'   "$HLO" cost $J/mlp_1/program.mlir $(inputs mlp_1)
# shellcheck disable=SC2046
expect mlp-3 0 '^TOTAL - 120 12 332$' "$HLO" cost $J/mlp_3/program.mlir $(inputs mlp_3)
# shellcheck disable=SC2046
expect mlp-7 0 '^TOTAL - 280 28 668$' "$HLO" cost $J/mlp_7/program.mlir $(inputs mlp_7)
# The same with literals (-i and --arg mixed): only the shapes count.
expect mlp-7-args 0 '^TOTAL - 280 28 668$' "$HLO" cost $J/mlp_7/program.mlir \
  --arg 'dense<1.0> : tensor<7x3xf32>' -i $J/mlp_7/inputs/arg1.npy --arg 'dense<0.5> : tensor<4x2xf32>'
# --json carries the same totals.
# shellcheck disable=SC2046
expect mlp-3-json 0 '"flops": 120, "transcendentals": 12, "bytes accessed": 332' \
  "$HLO" cost --json $J/mlp_3/program.mlir $(inputs mlp_3)

# The mlp program made static by writing b = 3 into its types (the shape
# assertion and dimension-size ops stay, refinement folds them away): its
# dot_general and tanh rows must equal the refined dynamic program's.
sed 's/?x/3x/g' $J/mlp_3/program.mlir >"$T/mlp_static3.mlir"
"$HLO" cost "$T/mlp_static3.mlir" 2>&1 | grep -E '^(dot_general|tanh) ' >"$T/static.rows"
# shellcheck disable=SC2046
"$HLO" cost $J/mlp_3/program.mlir $(inputs mlp_3) 2>&1 | grep -E '^(dot_general|tanh) ' >"$T/dyn.rows"
if [ -s "$T/static.rows" ] && [ "$(wc -l <"$T/static.rows")" -eq 2 ] && cmp -s "$T/static.rows" "$T/dyn.rows"; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL mlp-static-same: static rows differ from the refined ones:"
  diff "$T/static.rows" "$T/dyn.rows" | head -n 6
fi

# conv: x (3, 2, 5, 5) * w (3 out, 2 in, 3, 3), padding 1 on both spatial
# dims, output (3, 3, 5, 5). XLA counts only the window positions that fall
# inside the input: per spatial dim 5 outputs x 3 taps - 2 in the padding =
# 13, so 13*13 = 169 pairs; flops = 2 * batch 3 * out 3 * in 2 * 169 = 6084;
# bytes = 4*(150 + 54 + 225) = 1716.
# shellcheck disable=SC2046
expect conv-3 0 '^TOTAL - 6084 0 1716$' "$HLO" cost $J/conv_3/program.mlir $(inputs conv_3)
# multi: x (b, n) @ y (n, 2), two symbols; inputs (3, 4) and (4, 2):
#   flops = 2*3*4*2 = 48; bytes = 4*(12 + 8 + 6) = 104.
# shellcheck disable=SC2046
expect multi-3 0 '^TOTAL - 48 0 104$' "$HLO" cost $J/multi_3/program.mlir $(inputs multi_3)
# concat: concatenate(x, 2*x) on dim 0 with x (7, 3): the multiply is the
# only flop-counting op, 7*3 = 21 flops.
# shellcheck disable=SC2046
expect concat-7 0 '^multiply 1 21 0 ' "$HLO" cost $J/concat_7/program.mlir $(inputs concat_7)
# A static program takes inputs too (checked, then counted as declared).
cat >"$T/static.mlir" <<'X'
func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.add %a, %a : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
X
# add of 6 elements: 6 flops, bytes 4*(6 + 6 + 6) = 72.
expect static-with-input 0 '^TOTAL - 6 0 72$' "$HLO" cost "$T/static.mlir" --arg 'dense<1.0> : tensor<2x3xf32>'

# ------------------------------------------------------------- bad input
expect no-inputs 1 'program.mlir:[0-9]+:[0-9]+: error: argument 0 of @main is tensor<\?x3xf32>.*give its 3 inputs with --input' \
  "$HLO" cost $J/mlp_3/program.mlir
expect wrong-count 1 '@main takes 3 arguments but 2 inputs were given' \
  "$HLO" cost $J/mlp_3/program.mlir --input $J/mlp_3/inputs/arg0.npy --input $J/mlp_3/inputs/arg1.npy
expect too-many 1 '@main takes 3 arguments but 4 inputs were given' \
  "$HLO" cost $J/mlp_3/program.mlir --input $J/mlp_3/inputs/arg0.npy --input $J/mlp_3/inputs/arg1.npy \
  --input $J/mlp_3/inputs/arg2.npy --input $J/mlp_3/inputs/arg2.npy
expect static-wrong-count 1 '@main takes 1 argument but 2 inputs were given' \
  "$HLO" cost "$T/static.mlir" --arg 'dense<1.0> : tensor<2x3xf32>' --arg 'dense<1.0> : tensor<2x3xf32>'
expect wrong-rank 1 'error: argument 0 of @main is tensor<\?x3xf32> \(rank 2\); the input has rank 1' \
  "$HLO" cost $J/mlp_3/program.mlir --arg 'dense<1.0> : tensor<3xf32>' \
  --input $J/mlp_3/inputs/arg1.npy --input $J/mlp_3/inputs/arg2.npy
# shellcheck disable=SC2046
expect wrong-rank-npy 1 'argument 0 of @main is tensor<\?x3xf32>' \
  "$HLO" cost $J/mlp_bad_rank/program.mlir $(inputs mlp_bad_rank)
# shellcheck disable=SC2046
expect wrong-static-dim 1 'dimension 1 must be 3, not 5' \
  "$HLO" cost $J/mlp_bad_static_dim/program.mlir $(inputs mlp_bad_static_dim)
expect wrong-dtype 1 'error: argument 0 of @main is tensor<\?x3xf32>; the input is tensor<7x3xi32>' \
  "$HLO" cost $J/mlp_7/program.mlir --arg 'dense<1> : tensor<7x3xi32>' \
  --input $J/mlp_7/inputs/arg1.npy --input $J/mlp_7/inputs/arg2.npy
expect static-wrong-shape 1 'static.mlir:1:[0-9]+: error: argument 0 of @main is tensor<2x3xf32>; the input is tensor<3x2xf32>' \
  "$HLO" cost "$T/static.mlir" --arg 'dense<1.0> : tensor<3x2xf32>'
expect missing-file 1 "error: cannot open '$T/nope.npy': No such file" \
  "$HLO" cost $J/mlp_3/program.mlir --input "$T/nope.npy" --input $J/mlp_3/inputs/arg1.npy \
  --input $J/mlp_3/inputs/arg2.npy
expect bad-literal 1 "while reading --arg 'dense<1.0 : tensor<7x3xf32>'" \
  "$HLO" cost $J/mlp_3/program.mlir --arg 'dense<1.0 : tensor<7x3xf32>' \
  --input $J/mlp_3/inputs/arg1.npy --input $J/mlp_3/inputs/arg2.npy
# JAX's shape assertions are evaluated: b must be >= 1; symbols must agree.
# shellcheck disable=SC2046
expect assertion-empty 1 "Expected value >= 1 for dimension variable 'b'" \
  "$HLO" cost $J/mlp_bad_empty/program.mlir $(inputs mlp_bad_empty)
# shellcheck disable=SC2046
expect assertion-mismatch 1 'Found inconsistency between dimension size args\[1\]\.shape\[0\] \(= 4\)' \
  "$HLO" cost $J/multi_bad_mismatch/program.mlir $(inputs multi_bad_mismatch)
expect input-no-value 2 '--input needs a value' "$HLO" cost $J/mlp_3/program.mlir --input
expect arg-no-value 2 '--arg needs a value' "$HLO" cost $J/mlp_3/program.mlir --arg
expect bad-entry 1 'no function @nope' \
  "$HLO" cost --entry nope $J/mlp_3/program.mlir --input $J/mlp_3/inputs/arg0.npy

echo "cost-dynamic: $pass passed, $fail failed"
[ $fail -eq 0 ]
