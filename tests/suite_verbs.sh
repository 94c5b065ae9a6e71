#!/bin/sh
# suite_verbs.sh — `hlo compile` and `hlo dot` (issue 7, "Seeing what
# happened"). On every model of ../shared/models (NAME.cpu.mlir where there
# is one, else NAME.mlir) and every f32 program of ../shared/perf:
#   - `hlo compile --json --dump-to DIR` exits 0 with one well-formed JSON
#     object (tests/tools/jsoncheck) whose fusion counts (top-level + nested)
#     equal the "hlo.fusion" ops of the final dumped module, whose ops_after
#     is the last pass's, and which has the cpu figures (kernels, buffers:
#     peak = arguments + results + arena + interpreter peak);
#   - `hlo compile` (text) shows the fusions, thunks, compile and passes lines;
#   - `hlo dot -o G.dot` exits 0 with a well-formed graph (tests/tools/dotcheck:
#     braces, statements, every edge's ends declared) holding one cluster per
#     top-level fusion (compile's fusions.total), one parameter node per
#     argument and one result node per result of the compile's dump; when
#     graphviz is installed, `dot -Tsvg` renders it (else a printed note).
# Then small programs with known graphs, the interpreter backend, dynamic
# shapes, and bad input (missing file, malformed text, unknown pass, flag or
# backend, unwritable -o): a clear message, the documented exit status (1
# error, 2 usage), never a crash or a sanitizer report. The checkers are
# checked on broken input too. Prints "verbs: N passed, M failed"; exits 1 on
# a failure.
# Usage: tests/suite_verbs.sh [BUILD_DIR]   (default build; HLO_SHARED overrides ../shared)
cd "$(dirname "$0")/.." || exit 1
B=${1:-build}
SHARED=${HLO_SHARED:-../shared}
HLO=$B/hlo
DOTCHECK=$B/tests/tools/dotcheck
JSONCHECK=$B/tests/tools/jsoncheck
pass=0; fail=0
for t in "$HLO" "$DOTCHECK" "$JSONCHECK"; do
  if [ ! -x "$t" ]; then
    echo "verbs: $t not built (make BUILD=$B unit)"; echo "verbs: 0 passed, 1 failed"; exit 1
  fi
done
T=$(mktemp -d "${TMPDIR:-/tmp}/hlo_verbs.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# crashed OUT RC: whether the run crashed (signal) or a sanitizer reported.
crashed() {
  [ "$2" -ge 128 ] || grep -Eq 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$1"
}

# expect NAME WANT_RC REGEX CMD...: runs CMD (stdout+stderr captured); passes
# when the exit status is WANT_RC, the output matches the extended REGEX and
# shows no crash or sanitizer report.
expect() {
  name=$1; want=$2; re=$3; shift 3
  "$@" > "$T/out" 2>&1; rc=$?
  if crashed "$T/out" $rc; then
    bad "$name: CRASH (exit $rc): $*"; tail -n 8 "$T/out"
  elif [ "$rc" != "$want" ]; then
    bad "$name: exit $rc, want $want: $*"; tail -n 8 "$T/out"
  elif ! grep -Eq -- "$re" "$T/out"; then
    bad "$name: output does not match /$re/: $*"; tail -n 8 "$T/out"
  else
    ok
  fi
}

# jget FILE PATH: the value at PATH of JSON file FILE (empty when absent).
jget() { "$JSONCHECK" "$1" "$2" 2>/dev/null; }

if command -v dot >/dev/null 2>&1; then HAVE_DOT=1; else
  HAVE_DOT=0; echo "verbs: note: graphviz's dot is not installed; the SVG rendering checks are skipped"
fi

# ------------------------------------------------------ models and programs
programs() {
  for dir in "$SHARED"/models/*/; do
    name=$(basename "$dir")
    if [ -f "$dir$name.cpu.mlir" ]; then echo "$dir$name.cpu.mlir"
    elif [ -f "$dir$name.mlir" ]; then echo "$dir$name.mlir"; fi
  done
  for dir in "$SHARED"/perf/*/; do
    name=$(basename "$dir")
    [ -f "$dir$name.mlir" ] || continue
    grep -q bfloat16 "$dir/meta.json" 2>/dev/null && continue
    echo "$dir$name.mlir"
  done
}

nprog=0
for prog in $(programs); do
  nprog=$((nprog + 1))
  label=$(basename "$prog" .mlir)
  d="$T/$label"; mkdir -p "$d"
  # compile --json --dump-to
  "$HLO" compile "$prog" --json --dump-to "$d/dump" > "$d/c.json" 2> "$d/c.err"; rc=$?
  if crashed "$d/c.err" $rc || [ $rc != 0 ]; then
    bad "$label: hlo compile --json exit $rc"; tail -n 5 "$d/c.err"; continue
  fi
  if ! "$JSONCHECK" "$d/c.json" > /dev/null 2> "$d/j.err"; then
    bad "$label: compile --json is not well-formed JSON: $(cat "$d/j.err")"; continue
  fi
  ok
  total=$(jget "$d/c.json" fusions.total); nested=$(jget "$d/c.json" nested_fusions)
  last=$(ls "$d/dump" | grep '\.after\.mlir$' | sort | tail -n 1)
  if [ -z "$last" ]; then
    bad "$label: --dump-to wrote no NNNN.PASS.after.mlir"
  else
    infile=$(grep -o '"hlo\.fusion"' "$d/dump/$last" | wc -l)
    if [ "$((total + nested))" = "$infile" ] && [ "$total" -ge 0 ]; then ok; else
      bad "$label: fusions.total $total + nested_fusions $nested != $infile hlo.fusion ops in $last"; fi
  fi
  np=$(grep -o '"name":' "$d/c.json" | wc -l)
  lastafter=$(jget "$d/c.json" "passes.$((np - 1)).ops_after")
  opsafter=$(jget "$d/c.json" ops_after)
  if [ "$np" -gt 0 ] && [ -n "$opsafter" ] && [ "$lastafter" = "$opsafter" ]; then ok; else
    bad "$label: ops_after '$opsafter' is not the last pass's ops_after '$lastafter' ($np passes)"; fi
  # the cpu figures are there, and peak = arguments + results + arena + interpreter peak
  kern=$(jget "$d/c.json" kernels); peak=$(jget "$d/c.json" buffers.peak_bytes)
  sum=$(( $(jget "$d/c.json" buffers.arg_bytes) + $(jget "$d/c.json" buffers.out_bytes) +
          $(jget "$d/c.json" buffers.temp_bytes) + $(jget "$d/c.json" buffers.heap_peak_bytes) ))
  cc=$(jget "$d/c.json" stages_ms.cc); dyn=$(jget "$d/c.json" dynamic)
  if [ "$dyn" = false ] && [ -n "$kern" ] && [ "$kern" != null ] && [ "$kern" -ge 0 ] &&
     [ -n "$peak" ] && [ "$peak" -gt 0 ] && [ "$peak" = "$sum" ] && [ -n "$cc" ]; then ok; else
    bad "$label: cpu figures: dynamic '$dyn' kernels '$kern' peak_bytes '$peak' (parts: $sum) cc '$cc'"; fi
  # compile (text)
  expect "$label: compile text" 0 \
    '^  fusions: .*' "$HLO" compile "$prog" --no-cache
  if grep -Eq '^  thunks: .*kernels' "$T/out" && grep -Eq '^  compile: .* = ours .* \+ C compiler' "$T/out" &&
     grep -Eq '^  passes: ' "$T/out" && grep -Eq '^    fusion +[0-9.]+ ms' "$T/out"; then ok; else
    bad "$label: compile text lacks the thunks/compile/passes lines"; head -n 12 "$T/out"; fi
  # dot
  "$HLO" dot "$prog" -o "$d/g.dot" > "$d/d.out" 2>&1; rc=$?
  if crashed "$d/d.out" $rc || [ $rc != 0 ]; then
    bad "$label: hlo dot exit $rc"; tail -n 5 "$d/d.out"; continue
  fi
  if "$DOTCHECK" "$d/g.dot" --clusters "$total" > "$d/dc.out" 2>&1; then ok; else
    bad "$label: dot graph: $(cat "$d/dc.out")"; fi
  # parameters and results: as many nodes as the final module's @main has
  sig=$(grep -m1 'func.func .*@main(' "$d/dump/$last")
  nargs=$(printf '%s\n' "$sig" | sed 's/) -> .*//' | grep -o '%arg[0-9]*:' | wc -l)
  nres=$(grep -c 'label="result [0-9]*\\n' "$d/g.dot")
  npar=$(grep -c 'label="parameter [0-9]*\\n' "$d/g.dot")
  if [ "$npar" = "$nargs" ] && [ "$nres" -ge 1 ]; then ok; else
    bad "$label: dot has $npar parameter nodes for $nargs arguments, $nres result nodes"; fi
  if [ $HAVE_DOT = 1 ]; then
    if dot -Tsvg "$d/g.dot" -o "$d/g.svg" 2> "$d/svg.err" && grep -q '<svg' "$d/g.svg"; then ok; else
      bad "$label: dot -Tsvg failed: $(head -c 300 "$d/svg.err")"; fi
  fi
done
[ $nprog -ge 10 ] && ok || bad "found only $nprog programs under $SHARED (models, perf)"

# ----------------------------------------------------- small known graphs
cat > "$T/addmul.mlir" <<'X'
func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.add %a, %a : tensor<2x3xf32>
  %1 = stablehlo.multiply %0, %a : tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}
X
# one loop fusion: parameter, add, multiply, result; edges p->add (once),
# add->multiply, p->multiply, multiply->result
expect "addmul dot" 0 '^nodes 4 edges 4 clusters 1$' sh -c \
  "'$HLO' dot '$T/addmul.mlir' -o '$T/am.dot' && '$DOTCHECK' '$T/am.dot'"
expect "addmul dot labels" 0 'label="loop fusion\.[0-9]+, line 3"' cat "$T/am.dot"
expect "addmul dot op label" 0 'label="multiply\\ntensor<2x3xf32>\\nline 3"' cat "$T/am.dot"
# no pipeline: the program as written, no clusters
expect "addmul dot interp" 0 '^nodes 4 edges 4 clusters 0$' sh -c \
  "'$HLO' dot '$T/addmul.mlir' --backend interp > '$T/am2.dot' && '$DOTCHECK' '$T/am2.dot'"
expect "addmul dot stdin" 0 '^nodes 4 edges 4 clusters 0$' sh -c \
  "'$HLO' dot - --passes none < '$T/addmul.mlir' > '$T/am3.dot' && '$DOTCHECK' '$T/am3.dot'"
expect "addmul compile" 0 'fusions:   1: loop 1 \(2 ops\)' "$HLO" compile "$T/addmul.mlir"
expect "addmul compile interp json" 0 '^null$' sh -c \
  "'$HLO' compile '$T/addmul.mlir' --backend interp --json > '$T/am.json' && '$JSONCHECK' '$T/am.json' kernels"
expect "addmul compile interp: no buffers" 1 "no value at 'buffers'" "$JSONCHECK" "$T/am.json" buffers

# a while loop reading an outer value from its body: one node, a dashed edge
cat > "$T/while.mlir" <<'X'
func.func @main(%n: tensor<i32>, %step: tensor<i32>) -> tensor<i32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r = stablehlo.while(%i = %zero) : tensor<i32>
  cond {
    %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %s = stablehlo.add %i, %step : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }
  return %r : tensor<i32>
}
X
expect "while dot" 0 '^nodes 5 edges 4 clusters 0$' sh -c \
  "'$HLO' dot '$T/while.mlir' --passes none -o '$T/w.dot' && '$DOTCHECK' '$T/w.dot'"
expect "while dot dashed" 0 '^  n[01] -> n3 \[style=dashed\];$' cat "$T/w.dot"

# dynamic shapes: compile says so, dot refuses with the function's location
cat > "$T/dyn.mlir" <<'X'
func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.add %a, %a : tensor<?xf32>
  return %0 : tensor<?xf32>
}
X
expect "dynamic compile" 0 'dynamic shapes: ' "$HLO" compile "$T/dyn.mlir"
expect "dynamic compile json" 0 '^true$' sh -c \
  "'$HLO' compile '$T/dyn.mlir' --json > '$T/dyn.json' && '$JSONCHECK' '$T/dyn.json' dynamic"
expect "dynamic dot" 1 'dyn\.mlir:1:1: error: @main has dynamic shapes' "$HLO" dot "$T/dyn.mlir"

# a module whose only function is not @main: the verbs name that function
printf 'func.func @only(%%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %%a : tensor<2xf32>\n}\n' \
  > "$T/only.mlir"
expect "memory names the only function" 0 'only\.mlir: @only on cpu' "$HLO" memory "$T/only.mlir"
expect "compile names the only function" 0 'only\.mlir: @only on cpu' "$HLO" compile "$T/only.mlir"

# ------------------------------------------------------------ bad input
printf 'func.func @main() {\n  %%0 = stablehlo.constant dense<[1.0, 2.0> : tensor<2xf32>\n' > "$T/trunc.mlir"
printf 'func.func @main() -> tensor<2xf32> {\n  %%0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n  return %%0 : tensor<2xi32>\n}\n' \
  > "$T/badtype.mlir"
: > "$T/empty.mlir"
for v in compile dot; do
  expect "$v missing file" 1 "no_such_file\.mlir.*(No such file|not found|cannot)" \
    "$HLO" $v "$T/no_such_file.mlir"
  expect "$v malformed" 1 'trunc\.mlir:[0-9]+:[0-9]+: error' "$HLO" $v "$T/trunc.mlir"
  expect "$v verify error" 1 'badtype\.mlir:[0-9]+:[0-9]+: error' "$HLO" $v "$T/badtype.mlir"
  expect "$v empty" 1 'error: .*no functions' "$HLO" $v "$T/empty.mlir"
  expect "$v unknown pass" 1 "error: .*bogus-pass" "$HLO" $v "$T/addmul.mlir" --passes bogus-pass
  expect "$v empty pass name" 1 "error: " "$HLO" $v "$T/addmul.mlir" --passes "dce,,cse"
  expect "$v unknown flag" 2 "hlo $v: unknown flag.*--frobnicate" "$HLO" $v "$T/addmul.mlir" --frobnicate
  expect "$v flag without value" 2 "hlo $v: unknown flag or missing value '--passes'" \
    "$HLO" $v "$T/addmul.mlir" --passes
  expect "$v unknown backend" 2 "unknown backend 'tpu'" "$HLO" $v "$T/addmul.mlir" --backend tpu
  expect "$v missing FILE" 2 "hlo $v: missing FILE" "$HLO" $v
  expect "$v two FILEs" 2 "more than one FILE" "$HLO" $v "$T/addmul.mlir" "$T/addmul.mlir"
  expect "$v no entry" 1 'no function @nope' "$HLO" $v "$T/addmul.mlir" --entry nope
  expect "$v help" 0 "^usage: hlo $v FILE" "$HLO" $v --help
done
expect "dot unwritable -o" 1 "cannot write '$T/no/such/dir/g\.dot'" \
  "$HLO" dot "$T/addmul.mlir" -o "$T/no/such/dir/g.dot"
expect "compile unwritable --dump-to" 1 "error: " \
  "$HLO" compile "$T/addmul.mlir" --dump-to "$T/empty.mlir/sub"
expect "hlo --help lists the verbs" 0 '^  dot ' "$HLO" --help
expect "hlo --help lists compile" 0 '^  compile ' "$HLO" --help

# --------------------------------------------------- the checkers can fail
printf 'digraph g {\n  a [label="x"];\n  a -> b;\n}\n' > "$T/undecl.dot"
printf 'digraph g {\n  subgraph cluster_0 {\n  a;\n}\n' > "$T/unbal.dot"
printf 'digraph g {\n  a [label="x];\n}\n' > "$T/unterm.dot"
printf 'digraph g {\n  subgraph cluster_0 { a; }\n  b; a -> b;\n}\n' > "$T/good.dot"
expect "dotcheck: undeclared edge end" 1 "edge end 'b' is not a declared node" "$DOTCHECK" "$T/undecl.dot"
expect "dotcheck: unbalanced braces" 1 "unbalanced braces" "$DOTCHECK" "$T/unbal.dot"
expect "dotcheck: unterminated string" 1 "unterminated string" "$DOTCHECK" "$T/unterm.dot"
expect "dotcheck: cluster count" 1 "1 clusters, want 2" "$DOTCHECK" "$T/good.dot" --clusters 2
expect "dotcheck: good" 0 "^nodes 2 edges 1 clusters 1$" "$DOTCHECK" "$T/good.dot" --clusters 1
printf '{"a": [1, 2,], "b": 3}' > "$T/bad1.json"
printf '{"a": 1} {"b": 2}' > "$T/bad2.json"
printf '{"a": "x\001"}' > "$T/bad3.json"
printf '{"a": {"b": [10, {"c": "d\\"e"}]}, "n": -1.5e3, "t": true}' > "$T/good.json"
expect "jsoncheck: trailing comma" 1 "jsoncheck: .*byte" "$JSONCHECK" "$T/bad1.json"
expect "jsoncheck: two values" 1 "text after the JSON value" "$JSONCHECK" "$T/bad2.json"
expect "jsoncheck: control char" 1 "control character" "$JSONCHECK" "$T/bad3.json"
expect "jsoncheck: paths" 0 '^d\\"e$' "$JSONCHECK" "$T/good.json" a.b.1.c
expect "jsoncheck: number path" 0 '^-1\.5e3$' "$JSONCHECK" "$T/good.json" n
expect "jsoncheck: missing path" 1 "no value at 'a.b.2'" "$JSONCHECK" "$T/good.json" a.b.2

echo "verbs: $pass passed, $fail failed"
[ $fail -eq 0 ]
