#!/bin/sh
# Pass tests: each tests/passes/NAME.mlir runs through a pipeline of passes
# (tests/tools/hlo_opt.c, built as BUILD_DIR/tests/tools/hlo_opt) and its
# printed output is checked against the expectations written in the file.
# Ends with "N passed, N failed".
#
# usage: tests/suite_passes.sh [BUILD_DIR] [TEST.mlir ...]
#
# The format of a test file:
#   // PIPELINE: p1,p2,...   required, once: the pipeline run on every piece
#                            (pass names as `hlo_opt --passes` takes them)
#   // FLAGS: ...            optional: more hlo_opt flags (e.g. --fold-limit 8)
#   the program: one module, or several pieces separated by `// -----` lines;
#     each piece is parsed, verified, run through the pipeline (verifying
#     after each pass) and printed on its own; the outputs are joined with
#     `// -----` lines, in order;
#   // CHECK: text           lines checked by tests/filecheck.py, in order,
#   // CHECK-NEXT: text      over the whole output (substring match; {{re}}
#                            parts are regular expressions);
#   // CHECK-NOT: text       the text must not occur in the output of the
#                            piece the line is written in (fixed string);
#   // EXPECT-ERROR: text    the run must fail with a message containing the
#                            text (then CHECK lines are not looked at).
# Each file that runs is run again with --dump-to DIR: there must be a
# NNNN.PASS.before.mlir and NNNN.PASS.after.mlir per pass and piece, `hlo
# print` must read every one of them back (parse + verify), and the output
# must read back too.
B=${1:-build}
[ $# -gt 0 ] && shift
OPT=$B/tests/tools/hlo_opt
HLO=$B/hlo
OUT=$B/passes
pass=0; fail=0
[ -x "$OPT" ] || { echo "passes: $OPT not built"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$OUT"
files=${*:-tests/passes/*.mlir}

for t in $files; do
  name=$(basename "$t" .mlir)
  out="$OUT/$name.out"; err="$OUT/$name.err"; pieces="$OUT/$name.pieces"
  pipeline=$(sed -n 's|^// PIPELINE: *||p' "$t" | head -1)
  flags=$(sed -n 's|^// FLAGS: *||p' "$t" | head -1)
  experr=$(sed -n 's|^// EXPECT-ERROR: *||p' "$t" | head -1)
  if [ -z "$pipeline" ]; then echo "FAIL $name: no // PIPELINE: line"; fail=$((fail + 1)); continue; fi
  # shellcheck disable=SC2086
  "$OPT" "$t" --split-input-file --passes "$pipeline" $flags >"$out" 2>"$err"; rc=$?
  if [ -n "$experr" ]; then
    if [ $rc -ne 0 ] && grep -qF -- "$experr" "$err"; then
      echo "ok   $name (fails as expected)"; pass=$((pass + 1))
    else
      echo "FAIL $name: expected an error containing '$experr' (exit $rc): $(head -c 300 "$err")"
      fail=$((fail + 1))
    fi
    continue
  fi
  if [ $rc -ne 0 ]; then
    echo "FAIL $name: hlo_opt exited $rc: $(head -c 400 "$err")"; fail=$((fail + 1)); continue
  fi
  why=""
  if grep -q '// CHECK' "$t"; then
    python3 tests/filecheck.py "$t" CHECK "$out" >"$OUT/$name.fc" 2>&1 || why="$(head -2 "$OUT/$name.fc")"
  fi
  # CHECK-NOT, per piece: split the test and the output at `// -----`
  rm -rf "$pieces"; mkdir -p "$pieces"
  awk -v d="$pieces" 'BEGIN{n=0} /^\/\/ -----/{n++; next} {print > (d "/in" n)}' "$t"
  awk -v d="$pieces" 'BEGIN{n=0} /^\/\/ -----/{n++; next} {print > (d "/out" n)}' "$out"
  for p in "$pieces"/in*; do
    k=${p##*/in}
    grep '// CHECK-NOT:' "$p" | sed 's|.*// CHECK-NOT: *||' >"$pieces/not$k"
    while IFS= read -r pat; do
      [ -n "$pat" ] || continue
      if grep -qF -- "$pat" "$pieces/out$k" 2>/dev/null; then
        why="$why piece $k: CHECK-NOT '$pat' found in the output;"
      fi
    done <"$pieces/not$k"
  done
  # the output and every dump read back
  "$HLO" print "$out" --split-input-file >/dev/null 2>"$OUT/$name.rt" ||
    why="$why the output does not read back: $(head -c 200 "$OUT/$name.rt");"
  dd="$OUT/$name.dump"; rm -rf "$dd"
  # shellcheck disable=SC2086
  if "$OPT" "$t" --split-input-file --passes "$pipeline" $flags --dump-to "$dd" >/dev/null 2>&1; then
    npass=$(echo "$pipeline" | tr ',' '\n' | grep -c .)
    npieces=$(ls "$pieces" | grep -c '^in')
    want=$((npass * npieces))
    nb=$(ls "$dd" | grep -c '^[0-9][0-9][0-9][0-9]\..*\.before\.mlir$')
    na=$(ls "$dd" | grep -c '^[0-9][0-9][0-9][0-9]\..*\.after\.mlir$')
    [ "$nb" = "$want" ] && [ "$na" = "$want" ] ||
      why="$why dump: $nb before / $na after files, expected $want each;"
    for f in "$dd"/*.mlir; do
      "$HLO" print "$f" >/dev/null 2>"$OUT/$name.rt" ||
        { why="$why dump $(basename "$f") does not read back: $(head -c 200 "$OUT/$name.rt");"; break; }
    done
  else
    why="$why the run with --dump-to failed;"
  fi
  if [ -z "$why" ]; then
    echo "ok   $name"; pass=$((pass + 1))
  else
    echo "FAIL $name: $why"; fail=$((fail + 1))
  fi
done
echo "passes: $pass passed, $fail failed"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
