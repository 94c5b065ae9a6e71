#!/bin/sh
# run.sh — builds the libFuzzer target build/fuzz/fuzz_parse with clang
# (library sources compiled with clang + ASan/UBSan + fuzzer coverage, not
# the gcc objects of build/) and runs it.
#
# Usage: tests/fuzz/run.sh [SECONDS]    build, then fuzz for SECONDS (default
#                                       $FUZZ_SECONDS or 60) over a scratch copy
#                                       of tests/fuzz/corpus + crashes
#        tests/fuzz/run.sh --build      build only
#        tests/fuzz/run.sh --regress    build, then run every file of
#                                       tests/fuzz/crashes and corpus once
# Exit: 0 clean; 1 a crash/leak/timeout was found (the reproducer is left in
# build/fuzz/artifacts/ and named on stderr); 3 clang or libFuzzer missing.
# Env: FUZZ_CC (default clang, then clang-14), FUZZ_JOBS (default 2),
#      FUZZ_SEEDS: more seed folders for a long run (e.g. ../shared/fuzz-corpus),
#      FUZZ_KEEP: a folder that receives the grown corpus after the run (to
#      merge back into tests/fuzz/corpus with -merge=1).
set -u
cd "$(dirname "$0")/../.." || exit 1
FB=build/fuzz
JOBS=${FUZZ_JOBS:-2}
CCF=${FUZZ_CC:-}
if [ -z "$CCF" ]; then
  for c in clang clang-14; do command -v "$c" >/dev/null 2>&1 && { CCF=$c; break; }; done
fi
if [ -z "$CCF" ]; then echo "fuzz: skipped: clang not found (apt-get install clang)" >&2; exit 3; fi
mkdir -p "$FB/obj" "$FB/artifacts" || exit 1
# libFuzzer present?
if ! printf 'int LLVMFuzzerTestOneInput(const char*d,unsigned long n){(void)d;(void)n;return 0;}\n' \
     > "$FB/probe.c" || ! "$CCF" -fsanitize=fuzzer "$FB/probe.c" -o "$FB/probe" 2>/dev/null; then
  echo "fuzz: skipped: $CCF cannot link -fsanitize=fuzzer (install libclang-rt-dev)" >&2; exit 3
fi
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-sanitize=function"
# glibc's <complex.h> defines CMPLX/CMPLXF only for GCC >= 4.7; give clang them.
# hlo's build id (the compilation cache's key), made by the Makefile's rule
make -s --no-print-directory BUILD=$FB "$FB/gen/hlo_build_id.h" || exit 1
CFL="-std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer -Iinclude -Isrc -I$FB/gen -w \
 -Werror=implicit-function-declaration $SAN"
CMPLXD='-DCMPLX(x,y)=__builtin_complex((double)(x),(double)(y))'
CMPLXFD='-DCMPLXF(x,y)=__builtin_complex((float)(x),(float)(y))'
# Rebuild an object when its source or any header is newer than it.
newest_hdr=$(find include src -name '*.h' -newer "$FB/stamp" 2>/dev/null | head -n 1)
[ -f "$FB/stamp" ] || newest_hdr=all
list=$FB/tobuild.txt; : > "$list"
for s in $(find src -name '*.c' | sort) tests/fuzz/fuzz_parse.c; do
  o=$FB/obj/$(printf '%s' "$s" | tr '/' '_' | sed 's/\.c$/.o/')
  if [ -n "$newest_hdr" ] || [ ! -f "$o" ] || [ "$s" -nt "$o" ]; then echo "$s $o" >> "$list"; fi
done
if [ -s "$list" ]; then
  echo "fuzz: compiling $(wc -l < "$list") files with $CCF" >&2
  cc1=$FB/cc1.sh
  { echo '#!/bin/sh'
    echo 'case "$1" in tests/fuzz/*) cov=fuzzer;; *) cov=fuzzer-no-link;; esac'
    echo "$CCF $CFL -fsanitize=\$cov '$CMPLXD' '$CMPLXFD' -c \"\$1\" -o \"\$2\" ||"
    echo '  { echo "fuzz: cannot compile $1" >&2; exit 255; }'; } > "$cc1"
  xargs -P "$JOBS" -L 1 sh "$cc1" < "$list" || exit 1
fi
touch "$FB/stamp"
objs=$(find src -name '*.c' | sort | tr '/' '_' | sed "s|^|$FB/obj/|; s|\.c\$|.o|")
"$CCF" $SAN -fsanitize=fuzzer "$FB/obj/tests_fuzz_fuzz_parse.o" $objs -o "$FB/fuzz_parse" \
  $(make -s --no-print-directory ldlibs) || { echo "fuzz: link failed" >&2; exit 1; }
# absurd sizes must come back as NULL (hlo reports them), not abort in ASan
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1:allocator_may_return_null=1"
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
OPTS="-timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=65536"
case "${1:-}" in
--build) exit 0 ;;
--regress)
  # each reproducer on its own, so every failing one is named
  rc=0
  for f in tests/fuzz/crashes/*; do
    [ -f "$f" ] || continue
    if ! "$FB/fuzz_parse" $OPTS -runs=0 "$f" > "$FB/regress.log" 2>&1; then
      why=$(grep -E "fuzz_parse: |ERROR: |runtime error" "$FB/regress.log" | grep -v Running | head -n 1)
      echo "fuzz: FAIL $f: $why" >&2; rc=1
    fi
  done
  # the seeds together
  # shellcheck disable=SC2086
  if ! "$FB/fuzz_parse" $OPTS -runs=0 tests/fuzz/corpus/* > "$FB/regress.log" 2>&1; then
    tail -n 40 "$FB/regress.log" >&2; echo "fuzz: FAIL a seed of tests/fuzz/corpus" >&2; rc=1
  fi
  exit $rc ;;
esac
SECS=${1:-${FUZZ_SECONDS:-60}}
scratch=$FB/corpus.run
rm -rf "$scratch"; mkdir -p "$scratch"
cp tests/fuzz/corpus/* "$scratch"/ 2>/dev/null
cp tests/fuzz/crashes/* "$scratch"/ 2>/dev/null
for d in ${FUZZ_SEEDS:-}; do cp "$d"/* "$scratch"/ 2>/dev/null; done
echo "fuzz: running $FB/fuzz_parse for ${SECS}s (log: $FB/fuzz.log)" >&2
"$FB/fuzz_parse" $OPTS -max_total_time="$SECS" -print_final_stats=1 \
  -artifact_prefix="$FB/artifacts/" -dict=tests/fuzz/mlir.dict "$scratch" > "$FB/fuzz.log" 2>&1
rc=$?
tail -n 30 "$FB/fuzz.log" >&2
if [ -n "${FUZZ_KEEP:-}" ]; then mkdir -p "$FUZZ_KEEP" && cp "$scratch"/* "$FUZZ_KEEP"/ 2>/dev/null; fi
if [ $rc -ne 0 ]; then
  echo "fuzz: FAILED (exit $rc); reproducer(s): $(ls "$FB"/artifacts/ 2>/dev/null | tr '\n' ' ')" >&2
  exit 1
fi
echo "fuzz: clean after ${SECS}s" >&2
exit 0
