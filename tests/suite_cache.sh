#!/bin/sh
# suite_cache.sh — the persistent compilation cache end to end (issue 8),
# through the `hlo` program: a second process hits and gives the same
# results; a corrupted entry (flipped bytes, truncated, zero length, another
# format version) is reported, rebuilt with correct results and hit next
# time; two processes compiling one program at once both succeed and leave
# one entry; --cache-max-bytes keeps the cache under its bound; a changed
# argument shape is explained; a moved cache folder still hits; --no-cache
# writes nothing; `hlo cache list|stats|verify|clear`; the cache flags of
# run, bench and compile; `hlo run --pad-to-bucket`. Every case uses its own
# fresh cache root (mktemp -d, passed with --cache-dir; HLO_CACHE_DIR points
# into the suite's temporary folder too, so the user's cache is never
# touched). Matches the runtime's log lines on their stable parts (": hit ",
# ": miss ", "warning: cache entry"), never on times.
# Prints "cache: N passed, N failed".
# Usage: tests/suite_cache.sh [BUILD_DIR]   (default build; uses BUILD_DIR/hlo,
#   BUILD_DIR/tests/tools/npycmp and cache_put; HLO_SHARED overrides ../shared)
cd "$(dirname "$0")/.." || exit 1
B=${1:-build}
HLO=$B/hlo
CMP=$B/tests/tools/npycmp
PUT=$B/tests/tools/cache_put
SHARED=${HLO_SHARED:-../shared}
MODEL=$SHARED/models/mlp_block_f32
pass=0; fail=0
for x in "$HLO" "$CMP" "$PUT"; do
  if [ ! -x "$x" ]; then
    echo "cache: $x not built (make BUILD=$B all unit)"; echo "cache: 0 passed, 1 failed"; exit 1
  fi
done
T=$(mktemp -d "${TMPDIR:-/tmp}/hlo_cache.XXXXXX") || exit 1
trap 'umount "$T/mnt" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
export HLO_CACHE_DIR="$T/env-root"     # never the user's cache, even by mistake
unset HLO_LOG_COMPILES HLO_EXPLAIN_CACHE_MISSES HLO_CACHE_MAX_BYTES XDG_CACHE_HOME
# cold and warm results are compared bit for bit, so a cold run must be
# native, not interpreted while the compiler works (docs/tiered.md); the
# "tiered cold run" section turns tiering on
export HLO_TIERING=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | tail -n 8; }

# expect NAME WANT_RC REGEX CMD...: runs CMD (stdout+stderr captured in $out);
# passes when the exit status is WANT_RC, the output matches the extended
# REGEX and shows no crash or sanitizer report.
expect() {
  name=$1; want=$2; re=$3; shift 3
  out=$("$@" 2>&1); rc=$?
  if [ $rc -ge 128 ] || printf '%s\n' "$out" | grep -Eq 'ERROR: (Address|Leak)Sanitizer|runtime error:'; then
    bad "$name: CRASH (exit $rc): $*" "$out"
  elif [ "$rc" != "$want" ]; then
    bad "$name: exit $rc, want $want: $*" "$out"
  elif ! printf '%s\n' "$out" | grep -Eq -- "$re"; then
    bad "$name: output does not match /$re/: $*" "$out"
  else
    ok
  fi
}
# refute NAME REGEX: the last expect's output must not match REGEX.
refute() {
  if printf '%s\n' "$out" | grep -Eq -- "$2"; then bad "$1: output matches /$2/" "$out"; else ok; fi
}
# same NAME A.npy B.npy [npycmp flags]: the arrays agree (default: bit for bit).
same() {
  name=$1; a=$2; b=$3; shift 3
  [ $# -eq 0 ] && set -- --exact
  r=$("$CMP" "$a" "$b" "$@" 2>&1) && ok || bad "$name: $r"
}
# count_eq NAME WANT GOT
count_eq() { if [ "$2" = "$3" ]; then ok; else bad "$1: $3, want $2"; fi; }
newroot() { mktemp -d "$T/root.XXXXXX"; }
entries() { find "$1" -name '*.hlox' -type f 2>/dev/null | wc -l | tr -d ' '; }
files_in() { find "$1" -type f 2>/dev/null | wc -l | tr -d ' '; }
bytes_in() { find "$1" -type f -exec cat {} + 2>/dev/null | wc -c | tr -d ' '; }
entry_of() { find "$1" -name '*.hlox' -type f | head -n 1; }
# flip FILE OFFSET: complements the byte at OFFSET.
flip() {
  v=$(od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' ')
  printf "\\$(printf '%03o' $((255 - v)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
# lit ROWS COLS OFF: a dense f32 literal of distinct values (r * COLS + c + OFF) / 8.
lit() {
  awk -v R="$1" -v C="$2" -v O="$3" 'BEGIN {
    s = "dense<["; for (r = 0; r < R; r++) { s = s (r ? ", [" : "["); for (c = 0; c < C; c++)
      s = s (c ? ", " : "") sprintf("%.4f", (r * C + c + O) / 8.0); s = s "]" }
    printf "%s]> : tensor<%dx%dxf32>\n", s, R, C }'
}

# ----------------------------------------------------------- programs
cat > "$T/small.mlir" <<'X'
module @small {
  func.func @main(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %0 = stablehlo.exponential %x : tensor<8x16xf32>
    %1 = stablehlo.multiply %0, %y : tensor<8x16xf32>
    %2 = stablehlo.add %1, %x : tensor<8x16xf32>
    return %2 : tensor<8x16xf32>
  }
}
X
# two more programs, for the bound
sed 's/exponential/tanh/' "$T/small.mlir" > "$T/small_tanh.mlir"
sed 's/exponential/sine/' "$T/small.mlir" > "$T/small_sine.mlir"
# one function in two static variants: argument 0's shape differs
for n in 16 32; do
  cat > "$T/shape$n.mlir" <<X
module @shapes {
  func.func @main(%x: tensor<8x${n}xf32>) -> tensor<8x${n}xf32> {
    %0 = stablehlo.exponential %x : tensor<8x${n}xf32>
    %1 = stablehlo.add %0, %x : tensor<8x${n}xf32>
    return %1 : tensor<8x${n}xf32>
  }
}
X
done
# a row-wise program with a dynamic leading dimension
cat > "$T/dyn.mlir" <<'X'
module @rows {
  func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
    %0 = stablehlo.exponential %x : tensor<?x4xf32>
    %1 = stablehlo.multiply %0, %x : tensor<?x4xf32>
    return %1 : tensor<?x4xf32>
  }
}
X
# two dynamic arguments, each with its own result
cat > "$T/dyn2.mlir" <<'X'
module @rows2 {
  func.func @main(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
    %0 = stablehlo.exponential %x : tensor<?x4xf32>
    %1 = stablehlo.exponential %y : tensor<?x4xf32>
    return %0, %1 : tensor<?x4xf32>, tensor<?x4xf32>
  }
}
X
X1=$(lit 8 16 0); Y1=$(lit 8 16 5)
small() {  # small ROOT OUTDIR [FLAGS...]: runs small.mlir with the log on
  _sr=$1; _so=$2; shift 2
  "$HLO" run "$T/small.mlir" --quiet --arg "$X1" --arg "$Y1" --output-dir "$_so" \
    --cache-dir "$_sr" --log-compiles "$@"
}
minputs="--input $MODEL/inputs/arg0.npy --input $MODEL/inputs/arg1.npy --input $MODEL/inputs/arg2.npy"

# ----------------------------------------------------------- flags
expect help-run        0 'cache-max-bytes'     "$HLO" run --help
expect help-run-pad    0 'pad-to-bucket'       "$HLO" run --help
expect help-bench      0 'explain-cache-misses' "$HLO" bench --help
expect help-compile    0 'no-cache'            "$HLO" compile --help
expect help-cache      0 'removes nothing'     "$HLO" cache --help
expect help-main       0 'cache +the compilation cache' "$HLO" --help
R=$(newroot)
expect max-bytes-junk  2 "cache-max-bytes '12Q'.*K, M or G" "$HLO" run "$T/small.mlir" --cache-max-bytes 12Q
expect max-bytes-zero  2 "cache-max-bytes '0'"  "$HLO" run "$T/small.mlir" --cache-max-bytes 0
expect max-bytes-neg   2 "cache-max-bytes '-5'" "$HLO" bench "$T/small.mlir" --cache-max-bytes=-5
expect max-bytes-huge  2 "cache-max-bytes"     "$HLO" compile "$T/small.mlir" --cache-max-bytes 99999999999999999999
expect max-bytes-big   2 "cache-max-bytes '17179869184G'" "$HLO" compile "$T/small.mlir" --cache-max-bytes 17179869184G
expect max-bytes-empty 2 "cache-max-bytes ''"  "$HLO" compile "$T/small.mlir" --cache-max-bytes=
expect max-bytes-1G    0 '@main: 1 result'     "$HLO" run "$T/small.mlir" --arg "$X1" --arg "$Y1" --cache-dir "$R" --cache-max-bytes 1G
expect max-bytes-64k   0 '@main: 1 result'     "$HLO" run "$T/small.mlir" --arg "$X1" --arg "$Y1" --cache-dir "$R" --cache-max-bytes=64k
expect cache-dir-empty 2 'cache-dir'           "$HLO" run "$T/small.mlir" --cache-dir=
expect cache-dir-novalue 2 'missing value'     "$HLO" run "$T/small.mlir" --cache-dir

# ----------------------------------------------------------- hit in a second process
R=$(newroot)
expect model-cold      0 ': miss '  "$HLO" run "$MODEL/mlp_block_f32.mlir" $minputs --quiet \
  --output-dir "$T/m1" --cache-dir "$R" --log-compiles
same model-cold-vs-xla "$T/m1/out0.npy" "$MODEL/expected/out0.npy" --rtol 1e-4
count_eq model-one-entry 1 "$(entries "$R")"
expect model-warm      0 ': hit '   "$HLO" run "$MODEL/mlp_block_f32.mlir" $minputs --quiet \
  --output-dir "$T/m2" --cache-dir "$R" --log-compiles
refute model-warm-no-miss ': miss |warning'
same model-warm-vs-xla "$T/m2/out0.npy" "$MODEL/expected/out0.npy" --rtol 1e-4
same model-warm-vs-cold "$T/m2/out0.npy" "$T/m1/out0.npy"
count_eq model-still-one-entry 1 "$(entries "$R")"
# the environment variable turns the log on too (read by the runtime)
expect env-log-compiles 0 ': hit '  env HLO_LOG_COMPILES=1 "$HLO" run "$MODEL/mlp_block_f32.mlir" \
  $minputs --quiet --cache-dir "$R"
# compile and bench read the same cache
expect compile-hit     0 ': hit '   "$HLO" compile "$MODEL/mlp_block_f32.mlir" --cache-dir "$R" --log-compiles
expect bench-hit       0 ': hit '   "$HLO" bench "$MODEL/mlp_block_f32.mlir" $minputs --iters 1 \
  --warmup 1 --cache-dir "$R" --log-compiles

# ----------------------------------------------------------- tiered cold run
# (docs/tiered.md) results from the interpreter while the compiler works;
# the process still leaves the entry, which the next one hits (no tiering)
R=$(newroot)
expect tiered-cold     0 'tiered: ready in' env HLO_TIERING=1 "$HLO" run "$MODEL/mlp_block_f32.mlir" \
  $minputs --quiet --output-dir "$T/t1" --cache-dir "$R" --log-compiles
same tiered-cold-vs-xla "$T/t1/out0.npy" "$MODEL/expected/out0.npy" --rtol 1e-4
count_eq tiered-one-entry 1 "$(entries "$R")"
expect tiered-warm     0 ': hit '   env HLO_TIERING=1 "$HLO" run "$MODEL/mlp_block_f32.mlir" \
  $minputs --quiet --output-dir "$T/t2" --cache-dir "$R" --log-compiles
refute tiered-warm-not-tiered 'tiered:|: miss '
same tiered-warm-vs-xla "$T/t2/out0.npy" "$MODEL/expected/out0.npy" --rtol 1e-4

# ----------------------------------------------------------- moved root
mkdir "$T/elsewhere"
R2="$T/elsewhere/moved"
mv "$R" "$R2"
expect moved-root-hits 0 ': hit '   "$HLO" run "$MODEL/mlp_block_f32.mlir" $minputs --quiet \
  --output-dir "$T/m3" --cache-dir "$R2" --log-compiles
refute moved-root-no-warning 'warning|: miss '
same moved-root-results "$T/m3/out0.npy" "$MODEL/expected/out0.npy" --rtol 1e-4
if grep -rqF -- "$R" "$R2" 2>/dev/null; then bad "moved-root: an entry names the old root $R"; else ok; fi

# ----------------------------------------------------------- small program: reference results
R=$(newroot)
expect small-cold      0 ': miss '  small "$R" "$T/s0"
expect small-interp    0 ''         "$HLO" run "$T/small.mlir" --quiet --arg "$X1" --arg "$Y1" \
  --output-dir "$T/si" --backend interp
same small-vs-interp "$T/s0/out0.npy" "$T/si/out0.npy" --rtol 1e-5
expect small-warm      0 ': hit '   small "$R" "$T/s1"
same small-warm-results "$T/s1/out0.npy" "$T/s0/out0.npy"

# ----------------------------------------------------------- corrupted entries
# corrupt NAME WHY-REGEX ACTION: corrupts the entry of a fresh root with
# ACTION (a shell function taking the file), then: a warning naming the
# entry and WHY, correct results, one rebuilt entry that the next run hits.
corrupt() {
  cn=$1; cwhy=$2; caction=$3
  cr=$(newroot)
  small "$cr" "$T/c-$cn-0" >/dev/null 2>&1
  cf=$(entry_of "$cr")
  if [ -z "$cf" ]; then bad "corrupt-$cn: no entry was written"; return; fi
  $caction "$cf"
  expect "corrupt-$cn-warns" 0 "warning: cache entry .*($cwhy)" small "$cr" "$T/c-$cn-1"
  expect "corrupt-$cn-recompiles" 0 ': miss ' printf '%s\n' "$out"
  same "corrupt-$cn-results" "$T/c-$cn-1/out0.npy" "$T/s0/out0.npy"
  count_eq "corrupt-$cn-rebuilt" 1 "$(entries "$cr")"
  expect "corrupt-$cn-then-hits" 0 ': hit ' small "$cr" "$T/c-$cn-2"
  refute "corrupt-$cn-then-no-warning" 'warning'
  same "corrupt-$cn-hit-results" "$T/c-$cn-2/out0.npy" "$T/s0/out0.npy"
}
do_flip() { sz=$(wc -c < "$1"); flip "$1" $((sz / 2)); flip "$1" $((sz - 3)); }
do_trunc() { sz=$(wc -c < "$1"); head -c $((sz / 2)) "$1" > "$1.cut" && cat "$1.cut" > "$1" && rm -f "$1.cut"; }
do_zero() { : > "$1"; }
do_version() { printf '\143\000\000\000' | dd of="$1" bs=1 seek=8 conv=notrunc 2>/dev/null; }
do_header() { flip "$1" 20; }  # the length field (u64 at 16)
corrupt flipped   'checksum mismatch'  do_flip
corrupt truncated 'truncated'          do_trunc
corrupt zero      'truncated|unreadable|empty|short' do_zero
corrupt version   'format version 99'  do_version
corrupt length    'truncated|trailing|length' do_header

# ----------------------------------------------------------- an entry under another key
# small.mlir and small_tanh.mlir have one signature: tanh's entry copied over
# small's name (and the aliases gone) must be refused, not run.
R=$(newroot)
small "$R" "$T/k0" >/dev/null 2>&1
ek=$(entry_of "$R")
"$HLO" run "$T/small_tanh.mlir" --quiet --arg "$X1" --arg "$Y1" --cache-dir "$R" >/dev/null 2>&1
et=$(find "$R" -name '*.hlox' -type f ! -path "$ek" | head -n 1)
cp "$et" "$ek"; rm -rf "$R/aliases"
expect misnamed-entry  0 'warning: cache entry .*another key; removed, recompiling' small "$R" "$T/k1"
same misnamed-results "$T/k1/out0.npy" "$T/k0/out0.npy"
expect misnamed-rebuilt 0 ': hit ' small "$R" "$T/k2"

# ----------------------------------------------------------- hlo cache
R=$(newroot)
expect cache-list-missing-root 0 '' "$HLO" cache list --cache-dir "$T/no/such/root"
count_eq cache-list-missing-root-empty 0 "$(printf '%s\n' "$out" | grep -c '@')"
expect cache-stats-missing-root 0 'entries: +0' "$HLO" cache stats --cache-dir "$T/no/such/root"
expect cache-verify-missing-root 0 '0 entries checked' "$HLO" cache verify --cache-dir "$T/no/such/root"
if [ -e "$T/no" ]; then bad "cache on a missing root created it"; else ok; fi
expect cache-no-verb   2 'missing command'     "$HLO" cache
expect cache-bad-verb  2 "unknown command 'lst'" "$HLO" cache lst
expect cache-bad-flag  2 "unknown flag"        "$HLO" cache list --frobnicate
expect cache-off       0 'off'                 "$HLO" cache list --cache-dir off
small "$R" "$T/l0" >/dev/null 2>&1
key=$(basename "$(entry_of "$R")" .hlox | cut -c1-12)
expect cache-list      0 "^$key .*@main \(module small\) +\(tensor<8x16xf32>, tensor<8x16xf32>\) -> \(tensor<8x16xf32>\) +cpu" \
  "$HLO" cache list --cache-dir "$R"
count_eq cache-list-one-line 1 "$(printf '%s\n' "$out" | grep -c '@main')"
expect cache-list-age  0 'just now|[0-9]+ s ago' "$HLO" cache list --cache-dir "$R"
expect cache-stats     0 'entries: +1 ' "$HLO" cache stats --cache-dir "$R"
expect cache-stats-kernels 0 'kernels: +[1-9][0-9]* files' "$HLO" cache stats --cache-dir "$R"
expect cache-stats-root 0 "root: +$R" "$HLO" cache stats --cache-dir "$R"
expect cache-stats-bound 0 'bound of 4.00 GiB' "$HLO" cache stats --cache-dir "$R"
expect cache-stats-env-bound 0 'bound of 1.0 MiB' env HLO_CACHE_MAX_BYTES=1M "$HLO" cache stats --cache-dir "$R"
total=$(bytes_in "$R")
expect cache-stats-bytes 0 "total: .*\($total bytes\)" "$HLO" cache stats --cache-dir "$R"
expect cache-verify-good 0 '1 entry checked.*1 good, 0 bad' "$HLO" cache verify --cache-dir "$R"
# entries of known content (cache_put): order by last use, signatures, ages
k1=$("$PUT" "$R" one 'function=f\nmodule=m1\narg.0=tensor<2x3xf32>\narg.1=tensor<i32>\nresult.0=tensor<3xbf16>\nresult.1=tensor<i1>\nbackend=cpu')
k2=$("$PUT" "$R" two 'function=g\nmodule=m2\nresult.0=tensor<4xf32>\nbackend=cuda' 100000)
touch -d '3 hours ago' "$R/executables/$k1.hlox"
touch -d '10 minutes ago' "$R/executables/$k2.hlox"
expect cache-put-sig   0 "@f \(module m1\) +\(tensor<2x3xf32>, tensor<i32>\) -> \(tensor<3xbf16>, tensor<i1>\) +cpu" \
  "$HLO" cache list --cache-dir "$R"
expect cache-put-noargs 0 "@g \(module m2\) +\(\) -> \(tensor<4xf32>\) +cuda" "$HLO" cache list --cache-dir "$R"
expect cache-put-size  0 "$(echo "$k2" | cut -c1-12) +9[0-9.]+ KiB +10 min ago" "$HLO" cache list --cache-dir "$R"
expect cache-put-hours 0 "$(echo "$k1" | cut -c1-12) .* 3 h ago" "$HLO" cache list --cache-dir "$R"
count_eq cache-list-mru-first "@main @g @f " "$(printf '%s\n' "$out" | grep -o '@[a-z]*' | tr '\n' ' ')"
expect cache-stats-three 0 'entries: +3 ' "$HLO" cache stats --cache-dir "$R"
expect cache-put-verify 0 '3 entries checked.*3 good, 0 bad' "$HLO" cache verify --cache-dir "$R"
# verify: a bad entry is named with why, exit 1, and kept
flip "$R/executables/$k2.hlox" 5000
expect cache-verify-bad 1 "bad $(echo "$k2" | cut -c1-12).*: .*checksum mismatch" \
  "$HLO" cache verify --cache-dir "$R"
expect cache-verify-count 1 '3 entries checked.*2 good, 1 bad' "$HLO" cache verify --cache-dir "$R"
[ -f "$R/executables/$k2.hlox" ] && ok || bad "cache verify removed the bad entry"
: > "$R/executables/$k1.hlox"
expect cache-verify-zero 1 "bad $(echo "$k1" | cut -c1-12)" "$HLO" cache verify --cache-dir "$R"
expect cache-list-with-bad 0 "$key" "$HLO" cache list --cache-dir "$R"
# clear: removes everything, says what
nfiles=$(files_in "$R")
expect cache-clear     0 "removed $nfiles files" "$HLO" cache clear --cache-dir "$R"
expect cache-clear-names 0 '' printf '%s\n' "$out"
printf '%s\n' "$out" | grep -q "removing $key .*@main (module small)" && ok || bad "cache clear did not name $key" "$out"
count_eq cache-clear-empty 0 "$(files_in "$R")"
expect cache-after-clear 0 'entries: +0 ' "$HLO" cache stats --cache-dir "$R"
expect cache-clear-missing 0 'nothing to remove' "$HLO" cache clear --cache-dir "$T/no/such/root"
expect cache-after-clear-miss 0 ': miss ' small "$R" "$T/l1"
same cache-after-clear-results "$T/l1/out0.npy" "$T/s0/out0.npy"

# ----------------------------------------------------------- --no-cache, cache off
R=$(newroot)
expect no-cache        0 'cache off' small "$R" "$T/n0" --no-cache
same no-cache-results "$T/n0/out0.npy" "$T/s0/out0.npy"
count_eq no-cache-writes-nothing 0 "$(files_in "$R")"
expect cache-dir-off   0 'cache off' small off "$T/n1"
refute cache-dir-off-no-hit ': hit |: miss '
if [ -e off ]; then bad "--cache-dir off made a folder named off"; else ok; fi
count_eq env-root-untouched 0 "$(files_in "$T/env-root")"

# ----------------------------------------------------------- two processes at once
R=$(newroot)
"$HLO" run "$MODEL/mlp_block_f32.mlir" $minputs --quiet --output-dir "$T/p1" --cache-dir "$R" \
  --log-compiles > "$T/p1.log" 2>&1 &
p1=$!
"$HLO" run "$MODEL/mlp_block_f32.mlir" $minputs --quiet --output-dir "$T/p2" --cache-dir "$R" \
  --log-compiles > "$T/p2.log" 2>&1 &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
count_eq concurrent-first-ok 0 "$r1"
count_eq concurrent-second-ok 0 "$r2"
if grep -Eq 'warning|Sanitizer|runtime error' "$T/p1.log" "$T/p2.log"; then bad "concurrent: a warning" "$(cat "$T/p1.log" "$T/p2.log")"; else ok; fi
same concurrent-first-results "$T/p1/out0.npy" "$MODEL/expected/out0.npy" --rtol 1e-4
same concurrent-second-results "$T/p2/out0.npy" "$MODEL/expected/out0.npy" --rtol 1e-4
count_eq concurrent-one-entry 1 "$(entries "$R")"
count_eq concurrent-no-temporaries 0 "$(find "$R" -name '.tmp-*' | wc -l | tr -d ' ')"
expect concurrent-valid 0 '1 good, 0 bad' "$HLO" cache verify --cache-dir "$R"
expect concurrent-then-hits 0 ': hit ' "$HLO" run "$MODEL/mlp_block_f32.mlir" $minputs --quiet \
  --cache-dir "$R" --log-compiles

# ----------------------------------------------------------- the bound
# One program alone measures an entry (with its kernels); a bound of one
# and a half such entries must hold after three programs: the oldest
# program is gone, the newest kept.
R=$(newroot)
small "$R" "$T/b0" >/dev/null 2>&1
one=$(bytes_in "$R")
bound=$((one * 3 / 2))
R=$(newroot)
for p in small small_tanh small_sine; do
  "$HLO" run "$T/$p.mlir" --quiet --arg "$X1" --arg "$Y1" --output-dir "$T/b-$p" --cache-dir "$R" \
    --cache-max-bytes "$bound" >/dev/null 2>&1 || bad "bound: $p failed"
done
got=$(bytes_in "$R")
if [ "$one" -gt 0 ] && [ "$got" -le "$bound" ]; then ok; else bad "bound: $got bytes in the cache, bound $bound (one entry: $one)"; fi
[ "$(entries "$R")" -lt 3 ] && ok || bad "bound: no entry was evicted ($(entries "$R") entries, $got bytes, bound $bound)"
expect bound-newest-kept 0 ': hit ' "$HLO" run "$T/small_sine.mlir" --quiet --arg "$X1" --arg "$Y1" \
  --cache-dir "$R" --cache-max-bytes "$bound" --log-compiles
expect bound-oldest-gone 0 ': miss ' "$HLO" run "$T/small.mlir" --quiet --arg "$X1" --arg "$Y1" \
  --cache-dir "$R" --cache-max-bytes "$bound" --log-compiles
got=$(bytes_in "$R")
[ "$got" -le "$bound" ] && ok || bad "bound after a recompile: $got bytes, bound $bound"
# suffixes: 1K is 1024 bytes; an entry that alone is larger than the bound
# is not stored (one warning), the program still runs right, and what the
# cache holds stays under the bound (kernel objects evicted too)
R=$(newroot)
for p in small small_tanh; do
  expect bound-1k-$p 0 "warning: the compilation cache: the entry \([0-9]+ bytes\) is larger than the cache's bound \(1024 bytes" \
    "$HLO" run "$T/$p.mlir" --quiet --arg "$X1" --arg "$Y1" --cache-dir "$R" --cache-max-bytes 1K \
    --output-dir "$T/k1-$p"
done
same bound-1k-results "$T/k1-small/out0.npy" "$T/s0/out0.npy"
count_eq bound-1k-not-stored 0 "$(entries "$R")"
got=$(bytes_in "$R")
[ "$got" -le 1024 ] && ok || bad "bound 1K: $got bytes left in the cache"

# ----------------------------------------------------------- misses explained
R=$(newroot)
X16=$(lit 8 16 0); X32=$(lit 8 32 0)
expect explain-first   0 'no cached entry' "$HLO" run "$T/shape16.mlir" --quiet --arg "$X16" \
  --cache-dir "$R" --explain-cache-misses
expect explain-shape   0 'closest entry [0-9a-f]+ differs' "$HLO" run "$T/shape32.mlir" --quiet \
  --arg "$X32" --cache-dir "$R" --explain-cache-misses
printf '%s\n' "$out" | grep -q 'argument 0: shape 8x16 -> 8x32' && ok || bad "explain: no 'argument 0: shape 8x16 -> 8x32'" "$out"
R3=$(newroot)
"$HLO" compile "$T/shape16.mlir" --cache-dir "$R3" >/dev/null 2>&1
expect explain-env     0 'argument 0: shape 8x16 -> 8x32' \
  env HLO_EXPLAIN_CACHE_MISSES=1 "$HLO" compile "$T/shape32.mlir" --cache-dir "$R3"
expect explain-hit-silent 0 '' "$HLO" run "$T/shape32.mlir" --quiet --arg "$X32" --cache-dir "$R" \
  --explain-cache-misses
refute explain-hit-says-nothing 'cache miss'
# a dynamic program at two shapes: each specialization is an entry; the second is explained
expect explain-dyn-1   0 '' "$HLO" run "$T/dyn.mlir" --quiet --arg "$(lit 5 4 0)" --cache-dir "$R" \
  --explain-cache-misses --log-compiles
expect explain-dyn-2   0 'argument 0: shape 5x4 -> 7x4' "$HLO" run "$T/dyn.mlir" --quiet \
  --arg "$(lit 7 4 0)" --cache-dir "$R" --explain-cache-misses --log-compiles

# ----------------------------------------------------------- --pad-to-bucket
R=$(newroot)
L37=$(lit 37 4 0); L50=$(lit 50 4 3)
expect pad-37          0 'argument 0: 37 rows padded to 64 \(42% of the run.s rows are padding\)' \
  "$HLO" run "$T/dyn.mlir" --quiet --arg "$L37" --output-dir "$T/pad37" --cache-dir "$R" \
  --log-compiles --pad-to-bucket
printf '%s\n' "$out" | grep -q ': miss ' && ok || bad "pad-37: no compile (miss) logged" "$out"
printf '%s\n' "$out" | grep -q 'result 0: cut back from 64 to 37 rows' && ok || bad "pad-37: result not cut back" "$out"
expect pad-37-plain    0 '' "$HLO" run "$T/dyn.mlir" --quiet --arg "$L37" --output-dir "$T/plain37" \
  --no-cache
same pad-37-results "$T/pad37/out0.npy" "$T/plain37/out0.npy" --ulp 1
expect pad-50-hits     0 ': hit ' "$HLO" run "$T/dyn.mlir" --quiet --arg "$L50" --output-dir "$T/pad50" \
  --cache-dir "$R" --log-compiles --pad-to-bucket
printf '%s\n' "$out" | grep -q 'argument 0: 50 rows padded to 64 (22%' && ok || bad "pad-50: waste line" "$out"
expect pad-50-plain    0 '' "$HLO" run "$T/dyn.mlir" --quiet --arg "$L50" --output-dir "$T/plain50" \
  --no-cache
same pad-50-results "$T/pad50/out0.npy" "$T/plain50/out0.npy" --ulp 1
count_eq pad-one-entry-per-bucket 1 "$(entries "$R")"
expect pad-buckets     0 'argument 0: 37 rows padded to 40 ' "$HLO" run "$T/dyn.mlir" --quiet \
  --arg "$L37" --cache-dir "$R" --pad-to-bucket=8,40,100
expect pad-exact-bucket 0 '8 rows, a bucket already' "$HLO" run "$T/dyn.mlir" --quiet \
  --arg "$(lit 8 4 0)" --cache-dir "$R" --pad-to-bucket
expect pad-too-big     1 'argument 0 of @main has 37 rows, more than the largest bucket \(32\)' \
  "$HLO" run "$T/dyn.mlir" --quiet --arg "$L37" --cache-dir "$R" --pad-to-bucket=16,32
expect pad-static      1 'no argument of @main has a dynamic leading dimension' \
  "$HLO" run "$T/small.mlir" --quiet --arg "$X1" --arg "$Y1" --cache-dir "$R" --pad-to-bucket
expect pad-not-increasing 2 "pad-to-bucket '8,4'.*increasing" "$HLO" run "$T/dyn.mlir" --pad-to-bucket=8,4
expect pad-empty-list  2 "pad-to-bucket ''" "$HLO" run "$T/dyn.mlir" --pad-to-bucket=
expect pad-zero        2 "pad-to-bucket '0,8'" "$HLO" run "$T/dyn.mlir" --pad-to-bucket=0,8
expect pad-two-sizes    0 'result 1: cut back from 8 to 7 rows' \
  "$HLO" run "$T/dyn2.mlir" --arg "$(lit 5 4 0)" --arg "$(lit 7 4 0)" --cache-dir "$R" --pad-to-bucket
printf '%s\n' "$out" | grep -q 'argument 1: 7 rows padded to 8 (12% ' && ok || bad "pad-two-sizes: argument 1's line" "$out"
printf '%s\n' "$out" | grep -q 'result 0: cut back from 8 to 5 rows' && ok || bad "pad-two-sizes: result 0 cut to its own rows" "$out"
expect pad-two-same    0 'result 1: cut back from 8 to 5 rows' \
  "$HLO" run "$T/dyn2.mlir" --arg "$(lit 5 4 0)" --arg "$(lit 5 4 1)" --cache-dir "$R" --pad-to-bucket
count_eq pad-two-same-cut 2 "$(printf '%s\n' "$out" | grep -c 'result [01]: tensor<5x4xf32>')"
expect pad-interp      0 'argument 0: 37 rows padded to 64' "$HLO" run "$T/dyn.mlir" --quiet \
  --arg "$L37" --output-dir "$T/padi" --backend interp --pad-to-bucket
same pad-interp-results "$T/padi/out0.npy" "$T/plain37/out0.npy" --rtol 1e-5

# ----------------------------------------------------------- the compiler is in the key
# exp(x) != exp(x) is true only for NaN: -ffast-math folds it to false. An
# entry made with a fast-math compiler must never answer for plain cc.
cat > "$T/nan.mlir" <<'X'
func.func @main(%x: tensor<4xf32>) -> tensor<4xi1> {
  %e = stablehlo.exponential %x : tensor<4xf32>
  %c = stablehlo.compare NE, %e, %e : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %c : tensor<4xi1>
}
X
NANARG='dense<[1.0,0x7FC00000,3.0,4.0]>:tensor<4xf32>'
printf '#!/bin/sh\nexec %s -ffast-math "$@"\n' "${HLO_CC:-cc}" > "$T/fastcc"
chmod +x "$T/fastcc"
R=$(newroot)
expect cc-fast-miss    0 ': miss ' env HLO_CC="$T/fastcc" "$HLO" run "$T/nan.mlir" --cache-dir "$R" \
  --print-results --log-compiles --arg "$NANARG"
expect cc-plain-miss   0 'false, true, false, false' "$HLO" run "$T/nan.mlir" --cache-dir "$R" \
  --print-results --log-compiles --arg "$NANARG"
printf '%s\n' "$out" | grep -q ': miss ' && ok || bad "cc-plain-miss: plain cc hit the fast-math entry" "$out"
expect cc-plain-hit    0 'false, true, false, false' "$HLO" run "$T/nan.mlir" --cache-dir "$R" \
  --print-results --log-compiles --arg "$NANARG"
printf '%s\n' "$out" | grep -q ': hit ' && ok || bad "cc-plain-hit: no hit" "$out"
expect cc-flags-miss   0 ': miss ' env HLO_CC_FLAGS=-ffast-math "$HLO" run "$T/nan.mlir" \
  --cache-dir "$R" --print-results --log-compiles --arg "$NANARG"
expect cc-plain-again  0 'false, true, false, false' "$HLO" run "$T/nan.mlir" --cache-dir "$R" \
  --print-results --log-compiles --arg "$NANARG"
printf '%s\n' "$out" | grep -q ': hit ' && ok || bad "cc-plain-again: no hit" "$out"
R2=$(newroot)
env HLO_CC="$T/fastcc" "$HLO" run "$T/nan.mlir" --cache-dir "$R2" --arg "$NANARG" >/dev/null 2>&1
expect cc-explain-target 0 'differs in:' "$HLO" run "$T/nan.mlir" --cache-dir "$R2" --arg "$NANARG" \
  --explain-cache-misses
printf '%s\n' "$out" | grep -q 'target: .*fastcc.* -> ' && ok || bad "cc-explain-target: the target line" "$out"

# ----------------------------------------------------------- a misbehaving cache folder
# the compiler writes into a private folder, never the cache: a cache that
# cannot be written (read-only after the first store, a file, cleared while
# compiling) costs at most a warning, never the compile
R=$(newroot)
small "$R" "$T/ro0" >/dev/null 2>&1
chmod -R a-w "$R"
expect ro-cache-tanh   0 '' "$HLO" run "$T/small_tanh.mlir" --quiet --arg "$X1" --arg "$Y1" \
  --cache-dir "$R" --output-dir "$T/ro1"
refute ro-cache-no-error 'error'
same ro-cache-results "$T/ro1/out0.npy" "$T/b-small_tanh/out0.npy"
expect ro-cache-hit    0 ': hit ' small "$R" "$T/ro2"
same ro-cache-hit-results "$T/ro2/out0.npy" "$T/s0/out0.npy"
chmod -R u+w "$R"
: > "$T/afile"
expect file-cache      0 '' small "$T/afile" "$T/fc0"
refute file-cache-no-error 'error'
same file-cache-results "$T/fc0/out0.npy" "$T/s0/out0.npy"
count_eq file-cache-warnings-few 1 "$(printf '%s\n' "$out" | grep -c 'warning' | awk '{print ($1 <= 2)}')"
# a clear running while programs compile: every compile succeeds
R=$(newroot)
i=0; pids=""
for p in small small_tanh small_sine small small_tanh small_sine; do
  i=$((i + 1))
  "$HLO" run "$T/$p.mlir" --quiet --arg "$X1" --arg "$Y1" --cache-dir "$R" \
    --output-dir "$T/cl$i" > "$T/cl$i.log" 2>&1 &
  pids="$pids $!"
  "$HLO" cache clear --cache-dir "$R" >/dev/null 2>&1
done
"$HLO" cache clear --cache-dir "$R" >/dev/null 2>&1
i=0
for pid in $pids; do
  i=$((i + 1))
  if wait "$pid"; then ok; else bad "clear-while-compiling: run $i failed" "$(cat "$T/cl$i.log")"; fi
  grep -q 'error' "$T/cl$i.log" && bad "clear-while-compiling: run $i printed an error" "$(cat "$T/cl$i.log")"
done
same clear-while-results "$T/cl1/out0.npy" "$T/s0/out0.npy"
# the cache's files are readable by others (0644 less the umask)
R=$(newroot)
(umask 022 && small "$R" "$T/pm0" >/dev/null 2>&1)
e=$(entry_of "$R")
case $(ls -l "$e" | cut -c1-10) in -rw-r--r--) ok ;; *) bad "entry mode: $(ls -l "$e")" ;; esac
k=$(find "$R/kernels" -name '*.so' | head -n 1)
case $(ls -l "$k" | cut -c1-10) in -rw-r--r--) ok ;; *) bad "kernel mode: $(ls -l "$k")" ;; esac

# ----------------------------------------------------------- a root that cannot be used
long=$(awk 'BEGIN { s = "/tmp"; while (length(s) < 4200) s = s "/abcdefghij"; print s }')
expect root-too-long   0 'warning: the compilation cache is off: the cache folder from --cache-dir is [0-9]+ bytes long' \
  small "$long" "$T/lr0"
count_eq root-too-long-once 1 "$(printf '%s\n' "$out" | grep -c 'cache is off')"
same root-too-long-results "$T/lr0/out0.npy" "$T/s0/out0.npy"
expect root-no-home    0 'warning: the compilation cache is off: no cache folder' env -u HOME \
  -u HLO_CACHE_DIR -u XDG_CACHE_HOME "$HLO" run "$T/small.mlir" --quiet --arg "$X1" --arg "$Y1" \
  --output-dir "$T/nh0"
same root-no-home-results "$T/nh0/out0.npy" "$T/s0/out0.npy"
# HLO_CACHE_DIR="" is as if unset: the default root (XDG_CACHE_HOME here)
expect root-empty-env  0 ': miss ' env HLO_CACHE_DIR= XDG_CACHE_HOME="$T/xdg" "$HLO" run \
  "$T/small.mlir" --quiet --arg "$X1" --arg "$Y1" --log-compiles
count_eq root-empty-env-default 1 "$(entries "$T/xdg/hlo")"
expect max-bytes-once  0 'warning: HLO_CACHE_MAX_BYTES: expected a number' env HLO_CACHE_MAX_BYTES=12Q \
  "$HLO" cache stats --cache-dir "$(newroot)"
refute max-bytes-not-doubled 'HLO_CACHE_MAX_BYTES: HLO_CACHE_MAX_BYTES'

# ----------------------------------------------------------- full, noexec and read-only mounts (root only)
M="$T/mnt"
if [ "$(id -u)" = 0 ] && mkdir -p "$M" && mount -t tmpfs -o size=48k tmpfs "$M" 2>/dev/null; then
  dd if=/dev/zero of="$M/fill" bs=1k count=40 2>/dev/null
  expect full-disk     0 'No space left on device' small "$M/c" "$T/fd0"
  refute full-disk-no-error 'error|final link'
  same full-disk-results "$T/fd0/out0.npy" "$T/s0/out0.npy"
  umount "$M"
  mount -t tmpfs -o noexec,size=16m tmpfs "$M"
  expect noexec-miss   0 ': miss ' small "$M/c" "$T/nx0"
  refute noexec-no-error 'error|failed to map'
  expect noexec-hit    0 ': hit ' small "$M/c" "$T/nx1"
  same noexec-results "$T/nx1/out0.npy" "$T/s0/out0.npy"
  expect noexec-tmpdir 0 ': miss ' env TMPDIR="$M" "$HLO" run "$T/small_tanh.mlir" --quiet \
    --arg "$X1" --arg "$Y1" --cache-dir "$M/c2" --log-compiles --output-dir "$T/nx2"
  same noexec-tmpdir-results "$T/nx2/out0.npy" "$T/b-small_tanh/out0.npy"
  # a bad entry on a read-only mount: not removed, and the warning says so
  do_flip "$(entry_of "$M/c")"
  mount -o remount,ro "$M"
  expect ro-bad-entry  0 'checksum mismatch; could not remove it: Read-only file system, recompiling' \
    small "$M/c" "$T/nx3"
  refute ro-bad-entry-not-removed '; removed'
  same ro-bad-entry-results "$T/nx3/out0.npy" "$T/s0/out0.npy"
  umount "$M"
else
  echo "cache: (the mount cases need root and tmpfs: skipped)"
fi

echo "cache: $pass passed, $fail failed"
[ $fail -eq 0 ]
