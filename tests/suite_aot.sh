#!/bin/sh
# Ahead-of-time libraries (issue 11: `hlo compile --emit=lib`): for every
# program in ../shared/models (NAME.cpu.mlir where lowering for the CPU
# printed one, else NAME.mlir): emit the library, check that its C compiles
# warning-free with -std=c11 -O2 -Wall -Wextra -Werror on gcc and clang, that
# `nm -u` of libNAME.a names no hlo_ symbol and no dlopen and every symbol it
# defines starts with NAME_, link
# tests/aot/driver.c (no hlo code) against libNAME.a with plain cc, run it
# twice on the model's inputs, on 1 thread and on 3 (the runs must agree
# bit for bit) and compare
# with expected/ at the tolerances of tests/suite_models.sh (f32 1e-4
# relative norm-wise, bf16 2e-2, integers and bools exact; random_normal
# within 4 ULP). A program that cannot be embedded yet (an op the CPU backend
# runs on the interpreter, a convolution, a window op, a sort) must fail the
# emit cleanly (exit 1, "cannot be embedded yet" naming the op and its
# line): printed with its reason as "not yet", counted apart, not a
# failure. Then: --no-blas on the models with matrix products (no cblas
# symbol left), donated arguments, the constants in NAME.bin
# (HLO_AOT_CONSTANTS=file), OpenBLAS and oneDNN as the BLAS and an unknown
# one, the shared library, the thread team (and ThreadSanitizer), loop
# buffers, the error path of tests/aot/unsupported.mlir, bad usage, the
# example, and ASan+UBSan runs of the driver on a few models (LAPACK too).
# Ends with "N passed, N failed".
# Programs link with what the library's header names (NAME_LINK_FLAGS: the
# BLAS, -llapack for LAPACK custom calls, -lm -lpthread).
# usage: tests/suite_aot.sh [BUILD_DIR]   (HLO_SHARED overrides ../shared;
#   AOT_CLANG, default clang, the second compiler; AOT_BLAS, the libraries'
#   BLAS: cblas (default), openblas, dnnl or none, as HLO_AOT_BLAS)
B=${1:-build}
SHARED=${HLO_SHARED:-../shared}
M=$SHARED/models
HLO=$B/hlo
mkdir -p "$B/aot"
OUT=$(cd "$B/aot" && pwd)
CLANG=${AOT_CLANG:-clang}
[ -n "${AOT_BLAS:-}" ] && export HLO_AOT_BLAS=$AOT_BLAS
DRV=tests/aot/driver.c
CMP=tests/aot/compare.py
pass=0; fail=0; notyet=0
export HLO_CACHE_DIR=$(mktemp -d)
trap 'rm -rf "$HLO_CACHE_DIR"' EXIT
ok()  { printf 'ok   %s\n' "$1"; pass=$((pass + 1)); }
bad() { printf 'FAIL %s\n' "$1"; fail=$((fail + 1)); }
[ -d "$M" ] || { echo "aot: no $M"; echo "0 passed, 1 failed"; exit 1; }
[ -x "$HLO" ] || { echo "aot: no $HLO"; echo "0 passed, 1 failed"; exit 1; }
rm -rf "$OUT"/*
have_clang=1; command -v "$CLANG" >/dev/null 2>&1 || have_clang=0
[ $have_clang = 1 ] || echo "note: no $CLANG: the clang -Werror checks are not run"

# lib_ok NAME DIR: the library's checks that need no run
lib_checks() {
  n=$1; d=$2
  if nm -u "$d/lib$n.a" 2>/dev/null | grep -Eq ' (hlo_|dlopen|dlsym)'; then
    bad "$n: libNAME.a needs hlo or dlopen: $(nm -u "$d/lib$n.a" | grep -E ' (hlo_|dl)' | head -3 | tr '\n' ' ')"
    return 1
  fi
  other=$(nm -g --defined-only "$d/lib$n.a" 2>/dev/null | awk 'NF == 3 {print $3}' | grep -v "^${n}_" | head -3)
  if [ -n "$other" ]; then
    bad "$n: libNAME.a defines symbols without the NAME_ prefix: $other"
    return 1
  fi
  for c in gcc $([ $have_clang = 1 ] && echo "$CLANG"); do
    if ! $c -std=c11 -O2 -Wall -Wextra -Werror -c "$d/$n.c" -o "$d/$c.o" >"$d/$c.log" 2>&1; then
      bad "$n: $c -std=c11 -Wall -Wextra -Werror: $(head -c 300 "$d/$c.log")"
      return 1
    fi
  done
  return 0
}

# link_flags NAME DIR: what a program using DIR/libNAME.a links with
link_flags() { sed -n "s/^#define ${1}_LINK_FLAGS \"\(.*\)\"/\1/p" "$2/$1.h"; }

# run_model NAME DIR MODEL_DIR TOL EXTRA: link the driver, run, compare
run_model() {
  n=$1; d=$2; md=$3; tol=$4; extra=$5; libs=$(link_flags "$n" "$d")
  if ! cc -std=c11 -O1 -DLIB=$n "-DLIB_H=\"$d/$n.h\"" $DRV "$d/lib$n.a" $libs \
       -o "$d/driver" >"$d/link.log" 2>&1; then
    bad "$n: linking the driver with plain cc: $(head -c 300 "$d/link.log")"; return 1
  fi
  rm -rf "$d/out"; mkdir -p "$d/out"
  if ! "$d/driver" "$md/inputs" "$d/out" 2 3 >"$d/run.log" 2>&1; then
    bad "$n: the driver: $(head -c 300 "$d/run.log")"; return 1
  fi
  if ! r=$(python3 $CMP "$d/out" "$md/expected" $tol $extra 2>&1); then
    bad "$n: results: $r"; return 1
  fi
  return 0
}

tol_of() {  # MODEL_DIR NAME -> "TOL EXTRA"
  t=1e-4; e=""
  grep -q bfloat16 "$1/meta.json" && t=2e-2
  [ "$2" = random_normal ] && e="--ulp 4"
  echo "$t $e"
}

embedded=""
for dir in "$M"/*/; do
  name=$(basename "$dir")
  prog="$dir$name.mlir"
  [ -f "$dir$name.cpu.mlir" ] && prog="$dir$name.cpu.mlir"
  [ -f "$prog" ] || continue
  d="$OUT/$name"
  "$HLO" compile "$prog" --emit=lib -o "$d" --name "$name" >"$OUT/$name.emit.log" 2>&1; rc=$?
  if [ $rc != 0 ]; then
    if [ $rc = 1 ] && grep -q "cannot be embedded yet" "$OUT/$name.emit.log"; then
      printf 'not yet %-24s %s\n' "$name" "$(grep -m1 'error:' "$OUT/$name.emit.log" | sed 's/.*error: //' | cut -c1-160)"
      notyet=$((notyet + 1))
    else
      bad "$name: --emit=lib (exit $rc): $(grep -m1 -E 'error|fail' "$OUT/$name.emit.log" | cut -c1-300)"
    fi
    continue
  fi
  lib_checks "$name" "$d" || continue
  set -- $(tol_of "$dir" "$name")
  run_model "$name" "$d" "$dir" "$1" "${2:-}" || continue
  ok "$name (plain cc, libNAME.a, gcc/clang -Werror, no hlo symbol)"
  embedded="$embedded $name"
done

# --no-blas: the models with matrix products, with no BLAS at all
for name in mlp_block_f32 llama_block_bf16 naive_attention_f32; do
  case " $embedded " in *" $name "*) ;; *) continue ;; esac
  dir="$M/$name"; d="$OUT/$name-noblas"
  if ! "$HLO" compile "$dir/$name.mlir" --emit=lib --no-blas -o "$d" --name "$name" >"$d.log" 2>&1; then
    bad "$name --no-blas: $(grep -m1 error "$d.log" | cut -c1-300)"; continue
  fi
  if nm -u "$d/lib$name.a" | grep -q cblas; then bad "$name --no-blas: still needs cblas"; continue; fi
  set -- $(tol_of "$dir" "$name")
  run_model "$name" "$d" "$dir" "$1" "${2:-}" && ok "$name --no-blas (no dependency but libc and libm)"
done

# donated arguments: their memory given as the results they alias
# (tf.aliasing_output), as JAX passes donated buffers
name=tiny_llama_train_step; d="$OUT/$name"
case " $embedded " in
*" $name "*)
  mkdir -p "$d/out_donate"
  if "$d/driver" "$M/$name/inputs" "$d/out_donate" 1 2 donate >"$d/donate.log" 2>&1 &&
     python3 $CMP "$d/out_donate" "$M/$name/expected" 1e-4 >>"$d/donate.log" 2>&1; then
    ok "$name with donated arguments as its results' memory"
  else
    bad "$name with donated arguments: $(tail -c 300 "$d/donate.log")"
  fi ;;
*) bad "$name: not embedded, so donation is not tested" ;;
esac

# --constants=file (HLO_AOT_CONSTANTS=file): the large constants in
# NAME.bin, not in NAME.c; the driver checks the refusals (no file yet,
# missing, misaligned, corrupted) and loads it
name=tiny_llama_train_step; d="$OUT/$name-cfile"
if HLO_AOT_CONSTANTS=file "$HLO" compile "$M/$name/$name.mlir" --emit=lib -o "$d" --name tl >"$d.log" 2>&1 &&
   [ -s "$d/tl.bin" ] && [ "$(wc -c <"$d/tl.bin")" -gt 100000 ] &&
   [ "$(wc -c <"$d/tl.c")" -lt "$(wc -c <"$OUT/$name/$name.c")" ] && lib_checks tl "$d" &&
   cc -std=c11 -O1 -DLIB=tl "-DLIB_H=\"$d/tl.h\"" "-DLIB_BIN=\"$d/tl.bin\"" $DRV "$d/libtl.a" \
     $(link_flags tl "$d") -o "$d/driver" >>"$d.log" 2>&1 && mkdir -p "$d/out" &&
   "$d/driver" "$M/$name/inputs" "$d/out" 2 3 >>"$d.log" 2>&1 &&
   python3 $CMP "$d/out" "$M/$name/expected" 1e-4 >>"$d.log" 2>&1; then
  ok "$name with its constants in NAME.bin (refused when missing, misaligned, corrupted)"
else
  bad "$name with a constants file: $(tail -c 300 "$d.log")"
fi

# the other BLAS choices on a model with a product: OpenBLAS by path, oneDNN
# (skipped with a reason where the library is not installed); an unknown one
for b in openblas dnnl; do
  case $b in
  openblas) have=$(ls /usr/lib/*/openblas-*/libopenblas.so.0 /usr/lib/*/libopenblas.so 2>/dev/null | head -1) ;;
  dnnl) have=$(ls /usr/lib/*/libdnnl.so 2>/dev/null | head -1) ;;
  esac
  [ -n "$have" ] || { echo "note: no $b here: --blas=$b is not run"; continue; }
  name=mlp_block_f32; dir="$M/$name"; d="$OUT/$name-$b"
  if HLO_AOT_BLAS=$b "$HLO" compile "$dir/$name.mlir" --emit=lib -o "$d" --name "$name" >"$d.log" 2>&1 &&
     nm -u "$d/lib$name.a" | grep -q "$([ $b = dnnl ] && echo dnnl_sgemm || echo cblas_sgemm)" &&
     run_model "$name" "$d" "$dir" 1e-4 ""; then
    ok "$name with BLAS $b ($(link_flags "$name" "$d" | cut -c1-60))"
  else
    bad "$name with BLAS $b: $(tail -c 300 "$d.log")"
  fi
done
HLO_AOT_BLAS=bogus "$HLO" compile "$M/mlp_block_f32/mlp_block_f32.mlir" --emit=lib -o "$OUT/bogus" >"$OUT/bogus.log" 2>&1; rc=$?
if [ $rc = 1 ] && grep -q "unknown BLAS 'bogus'" "$OUT/bogus.log"; then ok "an unknown BLAS: exit 1, named"
else bad "an unknown BLAS: exit $rc: $(head -c 200 "$OUT/bogus.log")"; fi

# the shared library: linked by plain cc, run
name=mlp_block_f32; d="$OUT/$name"
if [ -f "$d/lib$name.so" ]; then
  if cc -std=c11 -DLIB=$name "-DLIB_H=\"$d/$name.h\"" $DRV -L"$d" -l$name -lm -Wl,-rpath,"$(cd "$d" && pwd)" \
       -o "$d/driver_so" >"$d/so.log" 2>&1 && mkdir -p "$d/out_so" &&
     "$d/driver_so" "$M/$name/inputs" "$d/out_so" 2 2 >>"$d/so.log" 2>&1 &&
     python3 $CMP "$d/out_so" "$M/$name/expected" 1e-4 >>"$d/so.log" 2>&1 &&
     ! nm -D --undefined-only "$d/lib$name.so" | grep -q ' hlo_'; then
    ok "$name: libNAME.so"
  else
    bad "$name: libNAME.so: $(head -c 300 "$d/so.log")"
  fi
else
  bad "$name: no lib$name.so"
fi

# the thread team: a kernel of 512 x 512 points and a product of 2^22
# multiply-adds (tests/aot/big.mlir; inputs, x * y + 1 and x . w made by
# numpy), on 1 and 3 threads (same bits), and under ThreadSanitizer (4)
d="$OUT/big"; bm="$OUT/big_model"
mkdir -p "$bm/inputs" "$bm/expected"
if python3 -c "
import numpy as np
r = np.random.default_rng(1)
x = r.standard_normal((512, 512)).astype(np.float32)
y = r.standard_normal((512, 512)).astype(np.float32)
w = r.standard_normal((512, 16)).astype(np.float32)
np.save('$bm/inputs/arg0.npy', x); np.save('$bm/inputs/arg1.npy', y); np.save('$bm/inputs/arg2.npy', w)
np.save('$bm/expected/out0.npy', (x * y + np.float32(1)).astype(np.float32))
np.save('$bm/expected/out1.npy', (x.astype(np.float64) @ w.astype(np.float64)).astype(np.float32))" &&
   "$HLO" compile tests/aot/big.mlir --emit=lib -o "$d" >"$OUT/big.log" 2>&1 &&
   grep -q "big_launch(T, " "$d/big.c" && run_model big "$d" "$bm" 1e-5 ""; then
  ok "big: a kernel and a gemm on the thread team (1 and 3 threads: same bits)"
  if cc -std=c11 -O1 -g -fsanitize=thread -DLIB=big "-DLIB_H=\"$d/big.h\"" $DRV "$d/big.c" $(link_flags big "$d") \
       -o "$d/driver_tsan" >"$d/tsan.log" 2>&1 && mkdir -p "$d/out_tsan" &&
     "$d/driver_tsan" "$bm/inputs" "$d/out_tsan" 3 4 >>"$d/tsan.log" 2>&1 &&
     python3 $CMP "$d/out_tsan" "$bm/expected" 1e-5 >>"$d/tsan.log" 2>&1; then
    ok "big on 4 threads under ThreadSanitizer"
  else
    bad "big under ThreadSanitizer: $(tail -c 400 "$d/tsan.log")"
  fi
else
  bad "big: $(tail -c 300 "$OUT/big.log")"
fi

# loop buffers: carried values handed on to other slots (staged), a case on
# the loop's counter, a reshape of a result (tests/aot/swap.mlir), exact
d="$OUT/swap"; sm="$OUT/swap_model"
mkdir -p "$sm/inputs" "$sm/expected"
if python3 -c "
import numpy as np
r = np.random.default_rng(2)
a = r.standard_normal(4).astype(np.float32); b = r.standard_normal(4).astype(np.float32)
k = np.array(5, dtype=np.int32)
np.save('$sm/inputs/arg0.npy', a); np.save('$sm/inputs/arg1.npy', b); np.save('$sm/inputs/arg2.npy', k)
i, x, y = 0, a, b
while i < k: i, x, y = i + 1, y, (x + y).astype(np.float32)
np.save('$sm/expected/out0.npy', x if i % 2 == 0 else -x)
np.save('$sm/expected/out1.npy', y); np.save('$sm/expected/out2.npy', y.reshape(2, 2))" &&
   "$HLO" compile tests/aot/swap.mlir --emit=lib -o "$d" >"$OUT/swap.log" 2>&1 &&
   run_model swap "$d" "$sm" 0 ""; then
  ok "swap: a loop handing carried values on, a case, a reshaped result"
else
  bad "swap: $(tail -c 300 "$OUT/swap.log")"
fi

# the error path: an op on the interpreter, named with its line; exit 1
u=tests/aot/unsupported.mlir
"$HLO" compile $u --emit=lib -o "$OUT/unsupported" >"$OUT/u.log" 2>&1; rc=$?
if [ $rc = 1 ] && grep -q "unsupported.mlir:4:8: error: --emit=lib: stablehlo.sort runs on the interpreter" "$OUT/u.log" &&
   [ ! -f "$OUT/unsupported/unsupported.c" ]; then
  ok "unsupported step: exit 1, the op and its line named"
else
  bad "unsupported step: exit $rc: $(head -c 300 "$OUT/u.log")"
fi
# usage errors: exit 2
"$HLO" compile $u --emit=lib >/dev/null 2>&1; r1=$?
"$HLO" compile $u --no-blas >/dev/null 2>&1; r2=$?
"$HLO" compile $u --emit=obj -o "$OUT/x" >"$OUT/emit_obj.log" 2>&1; r3=$?
"$HLO" compile $u --emit=lib -o "$OUT/x" --name 1bad >/dev/null 2>&1; r4=$?
if [ $r1 = 2 ] && [ $r2 = 2 ] && [ $r3 = 2 ] && [ $r4 = 1 ]; then ok "usage errors (no -o, options without --emit=lib, --emit=obj, bad --name)"
else bad "usage errors: exits $r1 $r2 $r3 $r4 (want 2 2 2 1)"; fi
grep -q "unknown --emit form 'obj'" "$OUT/emit_obj.log" && ok "--emit=obj names the form it was given" ||
  bad "--emit=obj: $(head -c 200 "$OUT/emit_obj.log")"
"$HLO" compile --help | grep -q -- "--emit=lib" && ok "compile --help documents --emit=lib" ||
  bad "compile --help lacks --emit=lib"

# the example (examples/aot): builds and runs
if sh examples/aot/build.sh "$B" >"$OUT/example.log" 2>&1 &&
   grep -q "result 0: f32\[32, 64\], sum" "$OUT/example.log"; then
  ok "examples/aot/build.sh"
else
  bad "examples/aot/build.sh: $(tail -c 300 "$OUT/example.log")"
fi

# ASan + UBSan: the generated C and the driver built with the sanitizers
for name in mlp_block_f32 while_collatz cond_switch softmax_xent linalg_ops lstm_scan; do
  case " $embedded " in *" $name "*) ;; *) continue ;; esac
  d="$OUT/$name"; md="$M/$name"
  if cc -std=c11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -DLIB=$name \
       "-DLIB_H=\"$d/$name.h\"" $DRV "$d/$name.c" $(link_flags "$name" "$d") -o "$d/driver_asan" >"$d/asan.log" 2>&1 &&
     mkdir -p "$d/out_asan" && ASAN_OPTIONS=detect_leaks=1 "$d/driver_asan" "$md/inputs" "$d/out_asan" 2 3 >>"$d/asan.log" 2>&1 &&
     python3 $CMP "$d/out_asan" "$md/expected" $(tol_of "$md" "$name") >>"$d/asan.log" 2>&1; then
    ok "$name under ASan+UBSan"
  else
    bad "$name under ASan+UBSan: $(tail -c 400 "$d/asan.log")"
  fi
done

echo "aot: $notyet programs not embeddable yet (listed above with their reason)"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
