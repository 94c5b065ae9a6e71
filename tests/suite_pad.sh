#!/bin/sh
# suite_pad.sh — `hlo run --pad-to-bucket` is safe: it pads only where the
# padding rows provably cannot change the real rows' results
# (src/passes/row_locality.c), and otherwise refuses (exit 1) naming the
# first op that mixes rows. Prints "pad: N passed, N failed".
#   - every tests/jax/dynamic fixture run padded either refuses with that
#     message or gives exactly the unpadded run's outputs (npycmp --exact;
#     --rtol 1e-6 for programs with a dot_general: the padded GEMM has more
#     rows, so the BLAS may block, and so sum, differently);
#   - the fixtures whose inputs break a JAX shape assertion still fail with it;
#   - small row-wise programs (exp, a softmax over the last dim, x*W with x
#     padded) are padded, cut back and correct; sums over rows, x^T*x, a
#     mean and a row count used as data are refused;
#   - a malformed bucket list is a usage error (exit 2) naming it.
# Usage: tests/suite_pad.sh [BUILD_DIR]   (default build; uses BUILD_DIR/hlo)
cd "$(dirname "$0")/.." || exit 1
B=${1:-build}
HLO=$B/hlo
CMP=$B/tests/tools/npycmp
pass=0; fail=0
if [ ! -x "$HLO" ] || [ ! -x "$CMP" ]; then
  echo "pad: $HLO or $CMP not built"; echo "pad: 0 passed, 1 failed"; exit 1
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/hlo_pad.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
R="$T/cache"   # the compilation cache of every run (never ~/.cache/hlo)
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "$2" ] && printf '%s\n' "$2" | tail -n 8; }
crashed() {
  [ "$1" -ge 128 ] || printf '%s\n' "$2" | grep -Eq 'ERROR: (Address|Leak)Sanitizer|runtime error:'
}

# expect NAME WANT_RC REGEX CMD...: exit status and output (extended regex).
expect() {
  name=$1; want=$2; re=$3; shift 3
  out=$("$@" 2>&1); rc=$?
  if crashed $rc "$out"; then bad "$name: CRASH (exit $rc): $*" "$out"
  elif [ "$rc" != "$want" ]; then bad "$name: exit $rc, want $want: $*" "$out"
  elif ! printf '%s\n' "$out" | grep -Eq -- "$re"; then bad "$name: output does not match /$re/" "$out"
  else ok; fi
}

# same NAME DIR_A DIR_B [NPYCMP FLAGS]: the same outK.npy files, each equal.
same() {
  name=$1; a=$2; b=$3; shift 3
  na=$(cd "$a" 2>/dev/null && ls out*.npy 2>/dev/null | sort | tr '\n' ' ')
  nb=$(cd "$b" 2>/dev/null && ls out*.npy 2>/dev/null | sort | tr '\n' ' ')
  if [ -z "$na" ] || [ "$na" != "$nb" ]; then bad "$name: results differ in number: [$na] vs [$nb]"; return; fi
  for f in $na; do
    o=$("$CMP" "$a/$f" "$b/$f" "$@" 2>&1) || { bad "$name: $f differs" "$o"; return; }
  done
  ok
}

REFUSE="padding argument [0-9]+'s rows would change the results: (the [a-z_]+ at [^ ]+:[0-9]+:[0-9]+ |result [0-9]+ of )"

# ------------------------------------------------- the JAX dynamic fixtures
padded=0; refused=0
for d in tests/jax/dynamic/*; do
  [ -f "$d/program.mlir" ] || continue
  n=$(basename "$d")
  ins=""
  for a in $(cd "$d/inputs" 2>/dev/null && ls | sort); do ins="$ins --input $d/inputs/$a"; done
  case $n in
  *_bad_*)
    # the unpadded run fails; padded, it must fail just the same
    out0=$("$HLO" run "$d/program.mlir" $ins --quiet --cache-dir "$R" 2>&1)
    want=$(printf '%s\n' "$out0" | grep -m1 'error: ' | sed 's/.*error: //' | cut -c1-60)
    expect "fixture-$n" 1 "error: " "$HLO" run "$d/program.mlir" $ins --quiet --cache-dir "$R" --pad-to-bucket
    if printf '%s\n' "$out" | grep -qF -- "$want"; then ok; else bad "fixture-$n: not the unpadded run's error ($want)" "$out"; fi
    case $n in even_bad_odd|mlp_bad_empty|multi_bad_mismatch)
      if printf '%s\n' "$out" | grep -q 'Input shapes do not match the polymorphic shapes'; then ok
      else bad "fixture-$n: the shape assertion did not fail" "$out"; fi ;;
    esac
    continue ;;
  esac
  "$HLO" run "$d/program.mlir" $ins --quiet --cache-dir "$R" --output-dir "$T/$n.u" > "$T/$n.ulog" 2>&1 ||
    { bad "fixture-$n: the unpadded run failed" "$(cat "$T/$n.ulog")"; continue; }
  out=$("$HLO" run "$d/program.mlir" $ins --quiet --cache-dir "$R" --output-dir "$T/$n.p" --pad-to-bucket 2>&1)
  rc=$?
  if crashed $rc "$out"; then bad "fixture-$n: CRASH (exit $rc)" "$out"
  elif [ $rc = 1 ]; then
    if printf '%s\n' "$out" | grep -Eq -- "$REFUSE"; then ok; refused=$((refused + 1))
    else bad "fixture-$n: exit 1 without the refusal message" "$out"; fi
  elif [ $rc = 0 ]; then
    padded=$((padded + 1))
    if grep -q 'dot_general' "$d/program.mlir"; then same "fixture-$n" "$T/$n.p" "$T/$n.u" --rtol 1e-6
    else same "fixture-$n" "$T/$n.p" "$T/$n.u" --exact; fi
  else bad "fixture-$n: exit $rc" "$out"; fi
done
echo "pad: fixtures: $padded padded (same results), $refused refused"

# the tester's example: even_1 sums pairs of rows (reshape to 2 x N/2)
expect even-refused 1 "the dynamic_reshape at tests/jax/dynamic/even_1/program.mlir:[0-9]+:[0-9]+ takes its shape from a value computed from their count" \
  "$HLO" run tests/jax/dynamic/even_1/program.mlir --input tests/jax/dynamic/even_1/inputs/arg0.npy \
  --cache-dir "$R" --pad-to-bucket

# ------------------------------------------------- small programs
lit() {  # lit ROWS COLS OFFSET: a tensor<ROWSxCOLSxf32> literal
  awk -v R="$1" -v C="$2" -v O="$3" 'BEGIN {
    s = "dense<["; for (r = 0; r < R; r++) { s = s (r ? ", [" : "["); for (c = 0; c < C; c++)
      s = s (c ? ", " : "") sprintf("%.4f", ((r * C + c + O) % 11) / 8.0 - 0.5); s = s "]" }
    printf "%s]> : tensor<%dx%dxf32>\n", s, R, C }'
}
cat > "$T/exp.mlir" <<'X'
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = stablehlo.exponential %x : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
X
cat > "$T/softmax.mlir" <<'X'
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<?x4xf32>, tensor<f32>) -> tensor<?xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<?xf32>) -> tensor<?x4xf32>
  %d = stablehlo.subtract %x, %mb : tensor<?x4xf32>
  %e = stablehlo.exponential %d : tensor<?x4xf32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<?x4xf32>, tensor<f32>) -> tensor<?xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<?xf32>) -> tensor<?x4xf32>
  %y = stablehlo.divide %e, %sb : tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
X
cat > "$T/matmul.mlir" <<'X'
func.func @main(%x: tensor<?x4xf32>, %w: tensor<4x3xf32>) -> (tensor<?x3xf32>, tensor<4x3xf32>) {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %1 = stablehlo.tanh %0 : tensor<?x3xf32>
  %2 = stablehlo.add %w, %w : tensor<4x3xf32>
  return %1, %2 : tensor<?x3xf32>, tensor<4x3xf32>
}
X
cat > "$T/two.mlir" <<'X'
func.func @main(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %0 = stablehlo.exponential %x : tensor<?x4xf32>
  %1 = stablehlo.exponential %y : tensor<?x4xf32>
  return %0, %1 : tensor<?x4xf32>, tensor<?x4xf32>
}
X
cat > "$T/sum.mlir" <<'X'
func.func @main(%x: tensor<?x4xf32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<?x4xf32>, tensor<f32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}
X
cat > "$T/gram.mlir" <<'X'
func.func @main(%x: tensor<?x4xf32>) -> tensor<4x4xf32> {
  %0 = stablehlo.dot_general %x, %x, contracting_dims = [0] x [0] : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
X
cat > "$T/count.mlir" <<'X'
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c4 = stablehlo.constant dense<[4]> : tensor<1xi32>
  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  %f = stablehlo.convert %n : (tensor<i32>) -> tensor<f32>
  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %shape = stablehlo.concatenate %n1, %c4, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %fb = stablehlo.dynamic_broadcast_in_dim %f, %shape, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x4xf32>
  %y = stablehlo.divide %x, %fb : tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
X
cat > "$T/transposed.mlir" <<'X'
func.func @main(%x: tensor<?x4xf32>) -> tensor<4x?xf32> {
  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<?x4xf32>) -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}
X
L37=$(lit 37 4 0); L5=$(lit 5 4 3); L7=$(lit 7 4 1); W=$(lit 4 3 2)
for p in exp softmax; do
  expect "$p-padded" 0 'result 0: cut back from 64 to 37 rows' \
    "$HLO" run "$T/$p.mlir" --quiet --arg "$L37" --cache-dir "$R" --output-dir "$T/$p.p" --pad-to-bucket
  expect "$p-plain" 0 '' "$HLO" run "$T/$p.mlir" --quiet --arg "$L37" --cache-dir "$R" --output-dir "$T/$p.u"
  same "$p-results" "$T/$p.p" "$T/$p.u" --exact
done
expect matmul-padded 0 'argument 0: 37 rows padded to 40 ' \
  "$HLO" run "$T/matmul.mlir" --quiet --arg "$L37" --arg "$W" --cache-dir "$R" --output-dir "$T/mm.p" \
  --pad-to-bucket=8,40
printf '%s\n' "$out" | grep -q 'result 0: cut back from 40 to 37 rows' && ok || bad "matmul: result 0 not cut back" "$out"
printf '%s\n' "$out" | grep -q 'result 1: cut back' && bad "matmul: result 1 (unpadded) cut" "$out" || ok
expect matmul-plain 0 '' "$HLO" run "$T/matmul.mlir" --quiet --arg "$L37" --arg "$W" --cache-dir "$R" \
  --output-dir "$T/mm.u"
same matmul-results "$T/mm.p" "$T/mm.u" --rtol 1e-6
expect matmul-interp 0 'result 0: cut back from 64 to 37 rows' \
  "$HLO" run "$T/matmul.mlir" --quiet --arg "$L37" --arg "$W" --backend interp --output-dir "$T/mmi.p" \
  --pad-to-bucket
same matmul-interp-results "$T/mmi.p" "$T/mm.u" --rtol 1e-6
# two padded arguments of different sizes: each result cut back to its own
expect two-sizes 0 'result 1: cut back from 8 to 7 rows' \
  "$HLO" run "$T/two.mlir" --quiet --arg "$L5" --arg "$L7" --cache-dir "$R" --output-dir "$T/two.p" \
  --pad-to-bucket
printf '%s\n' "$out" | grep -q 'result 0: cut back from 8 to 5 rows' && ok || bad "two-sizes: result 0" "$out"
expect two-plain 0 '' "$HLO" run "$T/two.mlir" --quiet --arg "$L5" --arg "$L7" --cache-dir "$R" \
  --output-dir "$T/two.u"
same two-results "$T/two.p" "$T/two.u" --exact
# refused
expect sum-refused 1 "padding argument 0's rows would change the results: the reduce at [^ ]*sum.mlir:3:[0-9]+ sums over them" \
  "$HLO" run "$T/sum.mlir" --quiet --arg "$L37" --cache-dir "$R" --pad-to-bucket
expect gram-refused 1 "the dot_general at [^ ]*gram.mlir:2:[0-9]+ contracts over them" \
  "$HLO" run "$T/gram.mlir" --quiet --arg "$L37" --cache-dir "$R" --pad-to-bucket
expect count-refused 1 "the dynamic_broadcast_in_dim at [^ ]*count.mlir:7:[0-9]+ broadcasts a value computed from their count" \
  "$HLO" run "$T/count.mlir" --quiet --arg "$L37" --cache-dir "$R" --pad-to-bucket
expect transposed-refused 1 "result 0 of @main carries them on a dimension other than 0" \
  "$HLO" run "$T/transposed.mlir" --quiet --arg "$L37" --cache-dir "$R" --pad-to-bucket
# a refusal pads nothing and prints no padding line
printf '%s\n' "$out" | grep -q 'rows padded to' && bad "transposed: padding printed before refusing" "$out" || ok
# a bucket already: no padding, still checked
expect exact-bucket 0 '8 rows, a bucket already' \
  "$HLO" run "$T/exp.mlir" --quiet --arg "$(lit 8 4 0)" --cache-dir "$R" --pad-to-bucket
expect exact-bucket-sum 1 'sums over them' \
  "$HLO" run "$T/sum.mlir" --quiet --arg "$(lit 8 4 0)" --cache-dir "$R" --pad-to-bucket

# ------------------------------------------------- the bucket list
for v in abc -1 1K '' 0,8 8,4 8,,16 ' 8'; do
  expect "list-'$v'" 2 "pad-to-bucket '$v'" "$HLO" run "$T/exp.mlir" --arg "$L5" --pad-to-bucket="$v"
  printf '%s\n' "$out" | grep -q 'more than one FILE' && bad "list-'$v': taken as a file name" "$out" || ok
done
expect list-separate 2 "pad-to-bucket 'abc'" "$HLO" run "$T/exp.mlir" --arg "$L5" --pad-to-bucket abc
expect list-ok 0 'argument 0: 5 rows padded to 6 ' \
  "$HLO" run "$T/exp.mlir" --quiet --arg "$L5" --cache-dir "$R" --pad-to-bucket=2,6
expect bare-before-file 0 'argument 0: 5 rows padded to 8 ' \
  "$HLO" run --pad-to-bucket "$T/exp.mlir" --quiet --arg "$L5" --cache-dir "$R"

echo "pad: $pass passed, $fail failed"
[ "$fail" = 0 ]
