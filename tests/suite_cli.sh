#!/bin/sh
# suite_cli.sh — bad input to the `hlo` program: every case must exit with
# the documented status (1 error, 2 usage; never >= 128, a crash) and print a
# FILE:LINE:COL diagnostic or a clear message. Prints "cli: N passed, N failed".
# Usage: tests/suite_cli.sh [BUILD_DIR]   (default build; uses BUILD_DIR/hlo)
cd "$(dirname "$0")/.." || exit 1
B=${1:-build}
HLO=$B/hlo
pass=0; fail=0
if [ ! -x "$HLO" ]; then
  echo "cli: $HLO not built"; echo "cli: 0 passed, 1 failed"; exit 1
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/hlo_cli.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM

# expect NAME WANT_RC REGEX CMD...: runs CMD (stdout+stderr captured); passes
# when the exit status is WANT_RC and the output matches the extended REGEX
# and shows no sanitizer report (ASan exits 1, which would look like an error).
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

# ----------------------------------------------------------- test inputs
cat > "$T/add.mlir" <<'X'
func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.add %a, %a : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
X
cat > "$T/ok.mlir" <<'X'
func.func @main() -> tensor<2xi32> {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  return %0 : tensor<2xi32>
}
X
: > "$T/empty.mlir"
printf '\177ELF\002\001\001\000\000\000\000\000\000\000\000\000\003\000>\000\001\000\000\000\377\376\375\n\000\000' \
  > "$T/garbage.mlir"
printf 'func.func @main() -> tensor<2xf32> {\n  %%0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n  return %%0 : tensor<2xi32>\n}\n' \
  > "$T/badtype.mlir"
printf 'func.func @main() {\n  %%0 = stablehlo.constant dense<[1.0, 2.0> : tensor<2xf32>\n' > "$T/trunc.mlir"
# Integer division by zero: the spec defines no trap, and XLA (which the
# reference follows) gives x / 0 = -1 (all ones) for signed and unsigned,
# INT_MIN / -1 = INT_MIN, x % 0 = x, INT_MIN % -1 = 0. In C these are UB or
# SIGFPE, so hlo must special-case them.
cat > "$T/div0.mlir" <<'X'
func.func @main() -> (tensor<4xi32>, tensor<4xi32>, tensor<2xui32>, tensor<2xi8>) {
  %a = stablehlo.constant dense<[7, -7, 0, -2147483648]> : tensor<4xi32>
  %b = stablehlo.constant dense<[0, 0, 0, -1]> : tensor<4xi32>
  %q = stablehlo.divide %a, %b : tensor<4xi32>
  %r = stablehlo.remainder %a, %b : tensor<4xi32>
  %c = stablehlo.constant dense<[7, 0]> : tensor<2xui32>
  %z = stablehlo.constant dense<0> : tensor<2xui32>
  %u = stablehlo.divide %c, %z : tensor<2xui32>
  %s = stablehlo.constant dense<[-128, 5]> : tensor<2xi8>
  %m = stablehlo.constant dense<[-1, 0]> : tensor<2xi8>
  %v = stablehlo.divide %s, %m : tensor<2xi8>
  return %q, %r, %u, %v : tensor<4xi32>, tensor<4xi32>, tensor<2xui32>, tensor<2xi8>
}
X
cat > "$T/cc.mlir" <<'X'
func.func @main() -> tensor<2xi64> {
  %pred = stablehlo.constant dense<PRED> : tensor<i1>
  %r = "stablehlo.if"(%pred) ({
    %0 = stablehlo.custom_call @no_such_target_xyz() : () -> tensor<2xi64>
    stablehlo.return %0 : tensor<2xi64>
  }, {
    %1 = stablehlo.constant dense<1> : tensor<2xi64>
    stablehlo.return %1 : tensor<2xi64>
  }) : (tensor<i1>) -> tensor<2xi64>
  return %r : tensor<2xi64>
}
X
{ cat "$T/ok.mlir"; echo '// -----'; echo 'func.func @main() {'; echo '  %0 = stablehlo.bogus_op'; } \
  > "$T/split.mlir"
sed 's/PRED/false/' "$T/cc.mlir" > "$T/cc_untaken.mlir"
sed 's/PRED/true/' "$T/cc.mlir" > "$T/cc_taken.mlir"

have_py=0
if command -v python3 >/dev/null 2>&1; then
  have_py=1
  # .npy files written by hand (no numpy needed): NPY 1.0 header, padded to 64.
  python3 - "$T" <<'PY'
import struct, sys
d = sys.argv[1]
def npy(path, descr, shape, data, header_extra=b''):
    shp = '(' + ', '.join(str(s) for s in shape) + (',)' if len(shape) == 1 else ')')
    h = ("{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shp)).encode()
    h += b' ' * (63 - (10 + len(h)) % 64) + b'\n'
    open(path, 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h + header_extra + data)
npy(d + '/good.npy', '<f4', (2, 3), struct.pack('<6f', *range(6)))
npy(d + '/shape.npy', '<f4', (3, 2), struct.pack('<6f', *range(6)))
npy(d + '/dtype.npy', '<i4', (2, 3), struct.pack('<6i', *range(6)))
npy(d + '/short.npy', '<f4', (2, 3), struct.pack('<3f', 1, 2, 3))            # data cut short
npy(d + '/huge.npy', '<f4', (1 << 40, 1 << 30), b'')                           # absurd shape
npy(d + '/fortran.npy', '<f4', (2, 3), struct.pack('<6f', *range(6)))
open(d + '/fortran.npy', 'r+b').write(open(d + '/fortran.npy', 'rb').read().replace(b'False', b'True '))
open(d + '/magic.npy', 'wb').write(b'\x93NUMPX\x01\x00\x10\x00' + b'x' * 40)
open(d + '/hdr.npy', 'wb').write(b'\x93NUMPY\x01\x00\xff\xff{"descr":')      # header length past EOF
open(d + '/text.npy', 'wb').write(b'hello, this is not an npy file\n')
PY
fi

# ------------------------------------------------------------- usage: 2
expect no-args            2 'usage'              "$HLO"
expect unknown-command    2 "unknown command"    "$HLO" frobnicate x.mlir
expect unknown-flag       2 "unknown flag"       "$HLO" run --bogus "$T/ok.mlir"
expect flag-missing-value 2 "missing value|usage" "$HLO" run "$T/ok.mlir" --input
expect two-files          2 "more than one"      "$HLO" check "$T/ok.mlir" "$T/ok.mlir"
expect missing-file-arg   2 "missing FILE"       "$HLO" run
expect bad-backend        2 "unknown backend"    "$HLO" run "$T/ok.mlir" --backend tpu

# ------------------------------------------------------- bad programs: 1
expect missing-file       1 "no_such_file\.mlir" "$HLO" check "$T/no_such_file.mlir"
expect missing-file-run   1 "no_such_file\.mlir" "$HLO" run "$T/no_such_file.mlir"
expect directory          1 "$T"                 "$HLO" check "$T"
expect empty-check        0 "ok"                 "$HLO" check "$T/empty.mlir"
# Without --split-input-file there is nothing to run: that must be an error.
expect empty-run          1 "empty\.mlir.*(function|main)|(function|main).*empty\.mlir" \
                                                 "$HLO" run "$T/empty.mlir"
expect garbage            1 "garbage\.mlir:[0-9]+:[0-9]+" "$HLO" check "$T/garbage.mlir"
expect garbage-stdin      1 ":[0-9]+:[0-9]+: error" sh -c "\"$HLO\" print - < \"$T/garbage.mlir\""
expect truncated          1 "trunc\.mlir:[0-9]+:[0-9]+" "$HLO" run "$T/trunc.mlir"
expect split-bad-piece    1 "split\.mlir:7:[0-9]+" "$HLO" run --split-input-file "$T/split.mlir"
expect type-mismatch      1 "badtype\.mlir:3:[0-9]+" "$HLO" check "$T/badtype.mlir"
expect no-such-entry      1 "nope"                "$HLO" run "$T/ok.mlir" --entry nope
expect too-few-inputs     1 "takes 1 argument"   "$HLO" run "$T/add.mlir"
expect ok-runs            0 "@main"              "$HLO" run "$T/ok.mlir"
if [ $have_py = 1 ]; then
  expect good-npy          0 "@main"             "$HLO" run "$T/add.mlir" --input "$T/good.npy"
  expect too-many-inputs   1 "takes 1 argument"  "$HLO" run "$T/add.mlir" --input "$T/good.npy" \
                                                 --input "$T/good.npy"
  expect npy-wrong-shape   1 "shape|2x3|3x2"     "$HLO" run "$T/add.mlir" --input "$T/shape.npy"
  expect npy-wrong-dtype   1 "i32|int32|<i4|f32|dtype|type" \
                                                 "$HLO" run "$T/add.mlir" --input "$T/dtype.npy"
  expect npy-short-data    1 "short\.npy"        "$HLO" run "$T/add.mlir" --input "$T/short.npy"
  expect npy-absurd-shape  1 "huge\.npy"         "$HLO" run "$T/add.mlir" --input "$T/huge.npy"
  expect npy-bad-magic     1 "magic\.npy"        "$HLO" run "$T/add.mlir" --input "$T/magic.npy"
  expect npy-bad-header    1 "hdr\.npy"          "$HLO" run "$T/add.mlir" --input "$T/hdr.npy"
  expect npy-text          1 "text\.npy"         "$HLO" run "$T/add.mlir" --input "$T/text.npy"
  # fortran_order True is legal .npy: the data is column-major (a+a of 0..5)
  expect npy-fortran       0 "\[0, 4, 8, 2, 6, 10\]" "$HLO" run "$T/add.mlir" --input "$T/fortran.npy"
  expect npy-missing       1 "nothere\.npy"      "$HLO" run "$T/add.mlir" --input "$T/nothere.npy"
  expect npy-is-directory  1 "$T"                "$HLO" run "$T/add.mlir" --input "$T"
else
  echo "cli: .npy cases skipped: python3 not found"
fi
expect output-dir-unwritable 1 "/dev/null/sub"   "$HLO" run "$T/ok.mlir" --output-dir /dev/null/sub
expect output-dir-is-file 1 "ok\.mlir"           "$HLO" run "$T/ok.mlir" --output-dir "$T/ok.mlir"

# ------------------------------------------------------------ semantics
expect int-div-by-zero    0 "\[-1, -1, -1, -2147483648\]" "$HLO" run "$T/div0.mlir" --print-results
expect int-rem-by-zero    0 "\[7, -7, 0, 0\]"     "$HLO" run "$T/div0.mlir" --print-results
expect uint-div-by-zero   0 "\[4294967295, 4294967295\]" "$HLO" run "$T/div0.mlir" --print-results
expect i8-min-div-neg1    0 "\[-128, -1\]"        "$HLO" run "$T/div0.mlir" --print-results
expect custom-call-untaken 0 "@main"             "$HLO" run "$T/cc_untaken.mlir"
expect custom-call-taken  1 "cc_taken\.mlir:4:[0-9]+: error.*no_such_target_xyz" \
                                                 "$HLO" run "$T/cc_taken.mlir"

# ------------------------------------------- dynamic shapes and tokens
D=tests/jax/dynamic
expect dyn-print-results  0 "tensor<3xf32>"      "$HLO" run "$D/arange_3/program.mlir" --arg 'dense<[0.0, 0.0, 0.0]> : tensor<3xf32>' --print-results
expect dyn-two-sizes      0 "tensor<2xf32> \[1, 2\]" "$HLO" run "$D/arange_3/program.mlir" --arg 'dense<1.0> : tensor<2xf32>'
expect dyn-bad-dim        1 "argument 0 of @main expects tensor<\?x3xf32>, got tensor<2x4xf32>: dimension 1 must be 3, not 4" \
                                                 "$HLO" run "$D/mlp_3/program.mlir" --arg 'dense<1.0> : tensor<2x4xf32>' --arg 'dense<1.0> : tensor<3x4xf32>' --arg 'dense<1.0> : tensor<4x2xf32>'
expect dyn-assertion      1 "program\.mlir:[0-9]+:[0-9]+: error: Input shapes do not match.*'b' = 0" \
                                                 "$HLO" run "$D/arange_3/program.mlir" --arg 'dense<1.0> : tensor<0xf32>'
expect token-result-skipped 0 "result 0: !stablehlo.token \(not written\)" \
                                                 "$HLO" run tests/jax/tokens/token_passthrough/program.mlir --arg 'dense<1.0> : tensor<3xf32>'
expect token-no-input     1 "takes 1 argument \(besides its tokens" \
                                                 "$HLO" run tests/jax/tokens/token_passthrough/program.mlir
# inputs whose sizes conflict: the inputs are named, hlo is not blamed
cat > "$T/dynadd.mlir" <<'X'
func.func @main(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.add %x, %y : tensor<?xf32>
  return %0 : tensor<?xf32>
}
X
cat > "$T/dynres.mlir" <<'X'
func.func @main(%x: tensor<?xf32>) -> tensor<3xf32> {
  %0 = stablehlo.convert %x : (tensor<?xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
X
expect dyn-inputs-conflict 1 "dynadd\.mlir:2:8: error: the sizes of input 0 dim 0 \(5\) and input 1 dim 0 \(7\) must agree for this add" \
                                                 "$HLO" run "$T/dynadd.mlir" --arg 'dense<1.0> : tensor<5xf32>' --arg 'dense<1.0> : tensor<7xf32>'
expect dyn-result-conflict 1 "dynres\.mlir:2:8: error: the size of input 0 dim 0 \(5\) must be 3 for this convert" \
                                                 "$HLO" run "$T/dynres.mlir" --arg 'dense<1.0> : tensor<5xf32>'
out=$("$HLO" run "$T/dynadd.mlir" --arg 'dense<1.0> : tensor<5xf32>' --arg 'dense<1.0> : tensor<7xf32>' 2>&1)
if printf '%s\n' "$out" | grep -q "hlo bug"; then
  fail=$((fail + 1)); echo "FAIL dyn-inputs-conflict-no-bug-note: $out"
else pass=$((pass + 1)); fi

# real_dynamic_slice whose start is an input but whose limit - start is 3:
# a dynamic_slice of 3 then a stride-2 slice: x[4:7:2]
cat > "$T/rds.mlir" <<'X'
func.func @main(%x: tensor<?xf32>, %s: tensor<1xi32>) -> tensor<?xf32> {
  %c = stablehlo.constant dense<3> : tensor<1xi32>
  %l = stablehlo.add %s, %c : tensor<1xi32>
  %st = stablehlo.constant dense<2> : tensor<1xi32>
  %0 = stablehlo.real_dynamic_slice %x, %s, %l, %st : (tensor<?xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
X
expect dyn-slice-dynamic-start 0 "result 0: tensor<2xf32> \[4, 6\]" \
                                                 "$HLO" run "$T/rds.mlir" --arg 'dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]> : tensor<8xf32>' --arg 'dense<4> : tensor<1xi32>'

# tuple results (nested too): element J of result K is written to outK_J.npy
cat > "$T/tuple.mlir" <<'X'
func.func @main(%x: tensor<?xf32>) -> tuple<tensor<?xf32>, tuple<tensor<i32>, tensor<?xf32>>> {
  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>
  %y = stablehlo.add %x, %x : tensor<?xf32>
  %i = stablehlo.tuple %n, %y : tuple<tensor<i32>, tensor<?xf32>>
  %t = stablehlo.tuple %x, %i : tuple<tensor<?xf32>, tuple<tensor<i32>, tensor<?xf32>>>
  return %t : tuple<tensor<?xf32>, tuple<tensor<i32>, tensor<?xf32>>>
}
X
expect tuple-result-summary 0 "result 0_1_1: tensor<2xf32> \[3, 3\]" \
                                                 "$HLO" run "$T/tuple.mlir" --arg 'dense<1.5> : tensor<2xf32>'
expect tuple-result-print 0 "tensor<i32> \{2\}"  "$HLO" run "$T/tuple.mlir" --arg 'dense<1.5> : tensor<2xf32>' --print-results
expect tuple-result-written 0 "out0_1_1\.npy"   sh -c "\"$HLO\" run \"$T/tuple.mlir\" --arg 'dense<1.5> : tensor<2xf32>' --output-dir \"$T/tup\" --quiet && ls \"$T/tup\""

# A dense_resource whose type's element count overflows: a located error, not "-1 elements".
cat > "$T/res_huge.mlir" <<'X'
func.func @main() -> tensor<4294967296x4294967296xf32> {
  %c = stablehlo.constant dense_resource<k> : tensor<4294967296x4294967296xf32>
  return %c : tensor<4294967296x4294967296xf32>
}
{-#
  dialect_resources: {
    builtin: {
      k: "0x040000000000803F"
    }
  }
#-}
X
expect resource-huge-type 1 'res_huge.mlir:2:[0-9]+: error: dense_resource<k>: the type has more elements than fit' "$HLO" run "$T/res_huge.mlir"

# ---------------------------------------------------------------- hlo bench
cat > "$T/dyn.mlir" <<'X'
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.add %x, %x : tensor<?xf32>
  return %0 : tensor<?xf32>
}
X
# bench_json FILE FLAGS...: the --json output must be one JSON object with
# the keys issue 7 names, consistent figures, and the given --iters/--warmup.
cat > "$T/bench_json.py" <<'X'
import json, sys
want_iters, want_warmup = int(sys.argv[1]), int(sys.argv[2])
d = json.loads(sys.stdin.read())
for k in ("median_us", "min_us", "compile_ms", "iters", "backend", "warmup", "stages_ms"):
    assert k in d, "missing key " + k
assert d["backend"] == "cpu", d["backend"]  # the default
assert want_iters < 0 or d["iters"] == want_iters, d["iters"]
assert want_iters >= 0 or d["iters"] > 100, "adaptive count too small for a tiny program: %d" % d["iters"]
assert d["warmup"] == want_warmup, d["warmup"]
assert 0 < d["min_us"] <= d["median_us"] <= d["max_us"], d
assert d["compile_ms"] > 0 and sorted(d["stages_ms"]) == ["cache", "cc", "lower", "parse", "passes", "prepare", "read", "verify"], d
assert d["cache"] in ("hit", "miss", "off"), d["cache"]
print("json ok", d["inputs"])
X
expect bench-help          0 "usage: hlo bench FILE"  "$HLO" bench --help
expect bench-in-main-help  0 "bench +time a program" "$HLO" --help
expect bench-text          0 "3 timed runs after 1 warm-up, random inputs \(seed 0\)" \
                                                    "$HLO" bench "$T/add.mlir" --iters 3
expect bench-text-median   0 "median [0-9.]+ (us|ms|s) +min [0-9.]+" "$HLO" bench "$T/add.mlir" --iters 2
expect bench-text-compile  0 "compile: [0-9.]+ ms \(read [0-9.]+, parse [0-9.]+, verify [0-9.]+, passes [0-9.]+, lower [0-9.]+, cc [0-9.]+, prepare" \
                                                    "$HLO" bench "$T/add.mlir" --iters 2
expect bench-seed          0 "seed 7\)"             "$HLO" bench "$T/add.mlir" --iters 1 --seed 7
expect bench-interp        0 "on interp, 2 timed runs" "$HLO" bench "$T/add.mlir" --iters 2 --backend interp
expect bench-profile       0 "profile: [0-9]+ thunks"  "$HLO" bench "$T/add.mlir" --iters 2 --profile
expect bench-no-args       0 "1 timed run after"    "$HLO" bench "$T/ok.mlir" --iters 1
expect bench-bad-backend   2 "unknown backend 'tpu' \(available: interp, cpu, cuda; " \
                                                    "$HLO" bench "$T/add.mlir" --backend tpu
expect bench-iters-zero    2 "--iters '0': expected a whole number of runs, at least 1" \
                                                    "$HLO" bench "$T/add.mlir" --iters 0
expect bench-iters-neg     2 "--iters '-3'"         "$HLO" bench "$T/add.mlir" --iters -3
expect bench-iters-text    2 "--iters 'ten'"        "$HLO" bench "$T/add.mlir" --iters ten
expect bench-iters-huge    2 "--iters '99999999999999999999'" "$HLO" bench "$T/add.mlir" --iters 99999999999999999999
expect bench-iters-missing 2 "missing value '--iters'" "$HLO" bench "$T/add.mlir" --iters
expect bench-warmup-neg    2 "--warmup '-1'"        "$HLO" bench "$T/add.mlir" --warmup -1
expect bench-warmup0-adapt 2 "--warmup 0 needs --iters" "$HLO" bench "$T/add.mlir" --warmup 0
expect bench-seed-bad      2 "--seed '-1'"          "$HLO" bench "$T/add.mlir" --seed -1
expect bench-unknown-flag  2 "unknown flag or missing value '--frob'" "$HLO" bench "$T/add.mlir" --frob
expect bench-missing-file  2 "missing FILE"         "$HLO" bench --iters 2
expect bench-two-files     2 "more than one FILE"   "$HLO" bench "$T/add.mlir" "$T/ok.mlir"
expect bench-no-such-file  1 "cannot open"          "$HLO" bench "$T/nonexistent.mlir"
expect bench-verify-error  1 'badtype.mlir:3:[0-9]+: error' "$HLO" bench "$T/badtype.mlir"
expect bench-input-count   1 "takes 1 argument but 2 inputs were given" \
                                                    "$HLO" bench "$T/add.mlir" --arg 'dense<1.0> : tensor<2x3xf32>' --arg 'dense<1.0> : tensor<2x3xf32>'
expect bench-input-shape   1 "tensor<3xf32>.*tensor<2x3xf32>|argument 0" \
                                                    "$HLO" bench "$T/add.mlir" --arg 'dense<1.0> : tensor<3xf32>'
expect bench-dynamic-random 1 'dyn.mlir:1:[0-9]+: error: random inputs: argument 0 of @main is tensor<\?xf32>' \
                                                    "$HLO" bench "$T/dyn.mlir"
expect bench-dynamic-given 0 "given inputs"         "$HLO" bench "$T/dyn.mlir" --iters 2 --arg 'dense<[1.0, 2.0]> : tensor<2xf32>'
expect bench-no-entry      1 "no function @nosuch" "$HLO" bench "$T/add.mlir" --entry nosuch
expect bench-run-error     1 "cc_taken\.mlir:4:[0-9]+: error.*no_such_target_xyz" \
                                                    "$HLO" bench "$T/cc_taken.mlir" --iters 2
if [ $have_py = 1 ]; then
  expect bench-json          0 "json ok random" sh -c "\"$HLO\" bench \"$T/add.mlir\" --json --iters 4 --warmup 2 | python3 \"$T/bench_json.py\" 4 2"
  expect bench-json-adaptive 0 "json ok random" sh -c "\"$HLO\" bench \"$T/add.mlir\" --json | python3 \"$T/bench_json.py\" -1 1"
  expect bench-json-given    0 "json ok given" sh -c "\"$HLO\" bench \"$T/add.mlir\" --json --iters=2 --warmup=0 --arg 'dense<1.5> : tensor<2x3xf32>' | python3 \"$T/bench_json.py\" 2 0"
  expect bench-npy-input   0 "json ok given" sh -c "\"$HLO\" bench \"$T/add.mlir\" --json --iters 3 --input \"$T/good.npy\" | python3 \"$T/bench_json.py\" 3 1"
else
  echo "cli: skipping the bench --json checks (python3 is missing)"
fi

# hlo cost: a table with a TOTAL line; --json; usage errors.
expect cost-table        0 '^TOTAL - [0-9]'                 "$HLO" cost "$T/ok.mlir"
expect cost-json         0 '"flops":'                       "$HLO" cost --json "$T/ok.mlir"
expect cost-missing      1 'cannot open'                    "$HLO" cost "$T/does-not-exist.mlir"
expect cost-bad-flag     2 'unknown flag'                   "$HLO" cost --bogus "$T/ok.mlir"
expect cost-no-file      2 'missing FILE'                   "$HLO" cost

# hlo run --passes / --dump-to: the pipeline runs (its report on stderr), the dumps parse back.
expect run-passes        0 'simplify .* ops'               "$HLO" run "$T/ok.mlir" --passes default --no-cache
"$HLO" run "$T/ok.mlir" --passes default --cache-dir "$T/passcache" >/dev/null 2>&1
expect run-passes-cached 0 'passes: none ran; .*compilation cache' "$HLO" run "$T/ok.mlir" --passes default --cache-dir "$T/passcache"
expect run-passes-bad    2 "unknown pass 'nope'|nope"        "$HLO" run "$T/ok.mlir" --passes simplify,nope
expect run-dump-to       0 'total'                          "$HLO" run "$T/ok.mlir" --dump-to "$T/dump"
expect run-dump-parses   0 'module'                         "$HLO" print "$T/dump/0000.inline.after.mlir"

# A chlo op after a pass list without chlo-legalize: the ops legalization adds when the
# executable is made must be numbered too (they ran on stale slots: [4, 4, 4]).
cat > "$T/asin.mlir" <<'X'
func.func @main(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = chlo.asin %x : tensor<3xf64> -> tensor<3xf64>
  return %0 : tensor<3xf64>
}
X
expect chlo-after-dce    0 '5.235988e-01, -?nan, -1.570796e\+00' "$HLO" run "$T/asin.mlir" --passes dce --print-results --arg 'dense<[0.5, 2.0, -1.0]> : tensor<3xf64>'
expect chlo-after-fusion-cpu 0 '5.235988e-01, -?nan, -1.570796e\+00' "$HLO" run "$T/asin.mlir" --passes fusion --backend cpu --print-results --arg 'dense<[0.5, 2.0, -1.0]> : tensor<3xf64>'

# The CPU backend is the default: --check runs the interpreter beside every compiled step;
# hlo memory reports the buffer assignment; without a C compiler the default falls back to
# the interpreter (with a note) while an explicit --backend cpu is an error.
cat > "$T/mlp.mlir" <<'X'
func.func @main(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = stablehlo.tanh %0 : tensor<8x4xf32>
  %2 = stablehlo.exponential %1 : tensor<8x4xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %3 = stablehlo.reduce(%2 init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
  return %3 : tensor<8xf32>
}
X
expect run-check         0 '@main: 1 result'   "$HLO" run "$T/mlp.mlir" --check --arg 'dense<0.5> : tensor<8x16xf32>' --arg 'dense<0.25> : tensor<16x4xf32>'
expect run-check-catches 1 'check: step [0-9]+ of program 0 \(hlo.fusion kind=.*differs from the interpreter' env HLO_CHECK_CORRUPT=0 "$HLO" run "$T/mlp.mlir" --check --arg 'dense<0.5> : tensor<8x16xf32>' --arg 'dense<0.25> : tensor<16x4xf32>'
expect run-check-names   1 'compiled as kernel k0: .void k0\(. in .*checkdump' env HLO_CHECK_CORRUPT=0 "$HLO" run "$T/mlp.mlir" --check --dump-to "$T/checkdump" --arg 'dense<0.5> : tensor<8x16xf32>' --arg 'dense<0.25> : tensor<16x4xf32>'
cat > "$T/huge_temp.mlir" <<'X'
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.broadcast_in_dim %x, dims = [] : (tensor<f32>) -> tensor<1000000000000xf32>
  %1 = stablehlo.exponential %0 : tensor<1000000000000xf32>
  %2 = "stablehlo.sort"(%1) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %l = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %l : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<1000000000000xf32>) -> tensor<1000000000000xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %3 = stablehlo.reduce(%2 init: %z) applies stablehlo.add across dimensions = [0] : (tensor<1000000000000xf32>, tensor<f32>) -> tensor<f32>
  return %3 : tensor<f32>
}
X
expect huge-temporaries  1 'temporaries of @main need 4000000000000 bytes' "$HLO" run "$T/huge_temp.mlir" --arg 'dense<1.0> : tensor<f32>'
expect run-cpu-stats     0 'cpu: .* kernels, 1 BLAS'  "$HLO" run "$T/mlp.mlir" --backend cpu --arg 'dense<0.5> : tensor<8x16xf32>' --arg 'dense<0.25> : tensor<16x4xf32>'
expect run-interp        0 'result 0: tensor<8xf32>'  "$HLO" run "$T/mlp.mlir" --backend interp --arg 'dense<0.5> : tensor<8x16xf32>' --arg 'dense<0.25> : tensor<16x4xf32>'
# Large splat constants that a step reads as a buffer (here a while loop's carried values) are
# filled at run time (STEP_FILL), not made at compile time; the loop then updates them in place.
cat > "$T/fill.mlir" <<'X'
func.func @main(%x: tensor<128x256xf32>) -> (tensor<128x256xf32>, tensor<128x256xi32>) {
  %z = stablehlo.constant dense<0.5> : tensor<128x256xf32>
  %zi = stablehlo.constant dense<7> : tensor<128x256xi32>
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c3 = stablehlo.constant dense<3> : tensor<i32>
  %r:3 = stablehlo.while(%i = %c0, %acc = %z, %ai = %zi) : tensor<i32>, tensor<128x256xf32>, tensor<128x256xi32>
    cond {
      %p = stablehlo.compare LT, %i, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %n = stablehlo.add %i, %c1 : tensor<i32>
      %a = stablehlo.add %acc, %x : tensor<128x256xf32>
      %b = stablehlo.add %ai, %zi : tensor<128x256xi32>
      stablehlo.return %n, %a, %b : tensor<i32>, tensor<128x256xf32>, tensor<128x256xi32>
    }
  return %r#1, %r#2 : tensor<128x256xf32>, tensor<128x256xi32>
}
X
expect fill-compile      0 '2 large splats filled at run time' "$HLO" compile "$T/fill.mlir"
expect fill-run-check    0 'result 1: tensor<128x256xi32> \[28, 28,.* min 28 max 28' "$HLO" run "$T/fill.mlir" --check --arg 'dense<0.25> : tensor<128x256xf32>'
expect fill-run-values   0 'result 0: tensor<128x256xf32> \[1.25, 1.25,.* min 1.25 max 1.25' "$HLO" run "$T/fill.mlir" --arg 'dense<0.25> : tensor<128x256xf32>'
# Gather and scatter with leading batching dims (jnp.take_along_axis and its gradient) run
# natively: indices past either end are clamped (gather) or skipped (scatter), as the interpreter.
cat > "$T/take_along.mlir" <<'X'
func.func @main(%x: tensor<2x3x5xf32>, %i: tensor<2x3x2x1xi32>, %u: tensor<2x3x2xf32>) -> (tensor<2x3x2xf32>, tensor<2x3x5xf32>) {
  %g = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [2], operand_batching_dims = [0, 1], start_indices_batching_dims = [0, 1], start_index_map = [2], index_vector_dim = 3>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 1>}> : (tensor<2x3x5xf32>, tensor<2x3x2x1xi32>) -> tensor<2x3x2xf32>
  %s = "stablehlo.scatter"(%x, %i, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [2], input_batching_dims = [0, 1], scatter_indices_batching_dims = [0, 1], scatter_dims_to_operand_dims = [2], index_vector_dim = 3>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<2x3x5xf32>, tensor<2x3x2x1xi32>, tensor<2x3x2xf32>) -> tensor<2x3x5xf32>
  return %g, %s : tensor<2x3x2xf32>, tensor<2x3x5xf32>
}
X
TA_X='dense<[[[0.0, 1.0, 2.0, 3.0, 4.0], [10.0, 11.0, 12.0, 13.0, 14.0], [20.0, 21.0, 22.0, 23.0, 24.0]], [[30.0, 31.0, 32.0, 33.0, 34.0], [40.0, 41.0, 42.0, 43.0, 44.0], [50.0, 51.0, 52.0, 53.0, 54.0]]]> : tensor<2x3x5xf32>'
TA_I='dense<[[[[4], [0]], [[-2], [2]], [[9], [1]]], [[[3], [3]], [[0], [5]], [[1], [4]]]]> : tensor<2x3x2x1xi32>'
TA_U='dense<[[[0.5, 0.25], [100.0, 0.125], [8.0, 9.0]], [[1000.0, 2.0], [3.0, 7.0], [0.0, -1.0]]]> : tensor<2x3x2xf32>'
expect take-along-native 0 '0 interpreter'  "$HLO" compile "$T/take_along.mlir"
expect take-along-gather 0 '\[2.400000e\+01, 2.100000e\+01\]' "$HLO" run "$T/take_along.mlir" --check --print-results --arg "$TA_X" --arg "$TA_I" --arg "$TA_U"
expect take-along-scatter 0 '\[3.000000e\+01, 3.100000e\+01, 3.200000e\+01, 1.035000e\+03, 3.400000e\+01\]' "$HLO" run "$T/take_along.mlir" --print-results --arg "$TA_X" --arg "$TA_I" --arg "$TA_U"
expect memory-text       0 'temp +[0-9]+ bytes'       "$HLO" memory "$T/mlp.mlir"
expect memory-json       0 '"argument_bytes": 768, "output_bytes": 32,' "$HLO" memory "$T/mlp.mlir" --json
expect memory-dump       0 'peak'                    "$HLO" memory "$T/mlp.mlir" --dump-to "$T/memdump"
expect memory-dump-file  0 'program 0'               cat "$T/memdump/buffer_assignment.txt"
expect memory-missing    1 'cannot open'              "$HLO" memory "$T/does-not-exist.mlir"
expect memory-bad-flag   2 'unknown flag'             "$HLO" memory --bogus "$T/mlp.mlir"
expect no-cc-fallback    0 'running on the interpreter' env HLO_CC=/nonexistent/cc HLO_CACHE_DIR=off "$HLO" run "$T/mlp.mlir" --arg 'dense<0.5> : tensor<8x16xf32>' --arg 'dense<0.25> : tensor<16x4xf32>'
expect no-cc-explicit    1 'C compiler|compiler'      env HLO_CC=/nonexistent/cc HLO_CACHE_DIR=off "$HLO" run "$T/mlp.mlir" --backend cpu --arg 'dense<0.5> : tensor<8x16xf32>' --arg 'dense<0.25> : tensor<16x4xf32>'
expect tiering-bad-value  0 'HLO_TIERING="disable" is not understood' env HLO_TIERING=disable HLO_CACHE_DIR=off "$HLO" run "$T/mlp.mlir" --arg 'dense<0.5> : tensor<8x16xf32>' --arg 'dense<0.25> : tensor<16x4xf32>'
# a directory as the compiler, and a script whose interpreter is missing (which only starting it
# tells: with tiering that is in the background, after the compile returned): the interpreter
# stands in, with or without tiering
mkdir -p "$T/ccdir"
printf '#!/nonexistent/sh\nexit 0\n' > "$T/badinterp"; chmod +x "$T/badinterp"
expect no-cc-dir         0 'running on the interpreter' env HLO_CC="$T/ccdir" HLO_CACHE_DIR=off "$HLO" run "$T/mlp.mlir" --arg 'dense<0.5> : tensor<8x16xf32>' --arg 'dense<0.25> : tensor<16x4xf32>'
expect no-cc-badinterp   0 'came from the interpreter|running on the interpreter' env HLO_CC="$T/badinterp" HLO_CACHE_DIR=off "$HLO" run "$T/mlp.mlir" --arg 'dense<0.5> : tensor<8x16xf32>' --arg 'dense<0.25> : tensor<16x4xf32>'
expect no-cc-badinterp-nt 0 'running on the interpreter' env HLO_CC="$T/badinterp" HLO_CACHE_DIR=off "$HLO" run "$T/mlp.mlir" --no-tiering --arg 'dense<0.5> : tensor<8x16xf32>' --arg 'dense<0.25> : tensor<16x4xf32>'
# tiered compiles (docs/tiered.md): a compiler that starts but fails fails the run
# after its results (exit 1, the compiler's message), with or without tiering
printf '#!/bin/sh\necho "badcc: refusing on purpose" >&2\nexit 1\n' > "$T/badcc"; chmod +x "$T/badcc"
expect tiered-cc-fails   1 'refusing on purpose'      env HLO_CC="$T/badcc" HLO_CACHE_DIR=off "$HLO" run "$T/mlp.mlir" --arg 'dense<0.5> : tensor<8x16xf32>' --arg 'dense<0.25> : tensor<16x4xf32>'
expect no-tiering-cc-fails 1 'refusing on purpose'    env HLO_CC="$T/badcc" HLO_CACHE_DIR=off "$HLO" run "$T/mlp.mlir" --no-tiering --arg 'dense<0.5> : tensor<8x16xf32>' --arg 'dense<0.25> : tensor<16x4xf32>'
expect tiered-stats-after 0 'cpu: [0-9]+ ops ->'      env HLO_CACHE_DIR=off "$HLO" run "$T/mlp.mlir" --backend cpu --arg 'dense<0.5> : tensor<8x16xf32>' --arg 'dense<0.25> : tensor<16x4xf32>'
expect bench-tiered-json 0 '"ready_ms": [0-9.]+, "first_result_ms": [0-9.]+, "first_run_tier": "(interp|native)"' env HLO_CACHE_DIR=off "$HLO" bench "$T/mlp.mlir" --iters 1 --json
expect bench-no-tiering  0 '"first_run_tier": "native"' env HLO_CACHE_DIR=off "$HLO" bench "$T/mlp.mlir" --iters 1 --json --no-tiering

# Faults a newcomer found: a private function as the entry survives the pipeline; a dump
# folder that cannot be made is an error (not a silent fall back to the interpreter); a
# 4000-op elementwise chain compiles (fusions are bounded); a FIFO in the kernel cache is
# a miss, not a hang.
cat > "$T/private_entry.mlir" <<'X'
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.exponential %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @helper(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.negate %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @other(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.abs %a : tensor<2xf32>
  %1 = func.call @helper(%0) : (tensor<2xf32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}
X
expect entry-private      0 'result 0: tensor<2xf32> \[-1, 2\]' "$HLO" run "$T/private_entry.mlir" --entry helper --arg 'dense<[1.0, -2.0]> : tensor<2xf32>'
expect dump-bad-folder    1 'cannot create the folder'  "$HLO" run "$T/ok.mlir" --dump-to /proc/self/no/such
{
  echo 'func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {'
  i=0; prev=%x
  while [ $i -lt 4000 ]; do echo "  %v$i = stablehlo.sine $prev : tensor<8xf32>"; prev=%v$i; i=$((i + 1)); done
  echo "  return $prev : tensor<8xf32>"
  echo '}'
} > "$T/chain4000.mlir"
expect long-chain         0 'fusions: +[0-9]+: loop'      "$HLO" compile "$T/chain4000.mlir"
mkdir -p "$T/fifocache"
HLO_CACHE_DIR="$T/fifocache" "$HLO" run "$T/mlp.mlir" --quiet --arg 'dense<0.5> : tensor<8x16xf32>' --arg 'dense<0.25> : tensor<16x4xf32>' >/dev/null 2>&1
# the kernel objects are in ROOT/kernels; then every file of the cache (kernel
# objects, notes, whatever else is there) becomes a FIFO: nothing may block on one
expect kernels-in-root    0 '[0-9a-f]{32}\.so'  ls "$T/fifocache/kernels"
find "$T/fifocache" -type f | while read -r k; do rm -f "$k"; mkfifo "$k"; done
expect fifo-in-cache      0 '@main: 1 result'  env HLO_CACHE_DIR="$T/fifocache" timeout 60 "$HLO" run "$T/mlp.mlir" --arg 'dense<0.5> : tensor<8x16xf32>' --arg 'dense<0.25> : tensor<16x4xf32>'

# --dump-to with --split-input-file: each module's dumps in DIR/module-K (they overwrote each other).
printf 'func.func @main() -> tensor<i32> {\n  %%0 = stablehlo.constant dense<1> : tensor<i32>\n  return %%0 : tensor<i32>\n}\n// -----\nfunc.func @main() -> tensor<i32> {\n  %%0 = stablehlo.constant dense<2> : tensor<i32>\n  return %%0 : tensor<i32>\n}\n' > "$T/two.mlir"
expect dump-split-run    0 '2 modules: 2 ran'                "$HLO" run "$T/two.mlir" --split-input-file --dump-to "$T/dsplit"
expect dump-split-mod2   0 'dense<2>'                        "$HLO" print "$T/dsplit/module-2/0000.inline.before.mlir"

echo "cli: $pass passed, $fail failed"
[ $fail -eq 0 ]
