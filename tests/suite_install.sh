#!/bin/sh
# suite_install.sh — hlo as an installed C library (`make install`,
# `make uninstall`; the Makefile's install section). Installs BUILD_DIR's
# program and libraries (built first when missing; nothing is rebuilt when they
# are up to date, which the suite checks with `make -n install`) into a
# temporary PREFIX, then again staged under a DESTDIR, and checks: the exact
# list of files, the shared library's links and soname (readelf -d), that it
# exports hlo_ symbols only (nm -D), hlo.pc's Version against `hlo --version`,
# examples/run_model.c built with nothing but pkg-config's flags — against
# libhlo.so (`--libs`) and against libhlo.a alone (`--static --libs`) — and run
# on the bundled model, giving what BUILD_DIR/examples/run_model gives; then
# that `make uninstall` removes exactly what install wrote (files that were
# in the prefix before stay). Ends with "install: N passed, N failed".
# usage: tests/suite_install.sh [BUILD_DIR]   (default build)
cd "$(dirname "$0")/.." || exit 1
B=${1:-build}
pass=0; fail=0
MODEL=examples/models/mlp_block/mlp_block.mlir
JOBS=${HLO_MAKE_JOBS:-2}

finish() {
  echo "install: $pass passed, $fail failed"
  [ $fail -eq 0 ]
  exit
}
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
# check NAME CMD...: passes when CMD succeeds.
check() {
  name=$1; shift
  if "$@"; then ok; else bad "$name"; fi
}
for tool in cc make readelf nm pkg-config; do
  if ! command -v $tool >/dev/null 2>&1; then
    echo "install: $tool is missing (apt-get install binutils pkg-config)"
    fail=1; finish
  fi
done

T=$(mktemp -d "${TMPDIR:-/tmp}/hlo_install.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
mk() { make --no-print-directory -j"$JOBS" BUILD="$B" "$@"; }

# ------------------------------------------------ the build (reused)
if ! out=$(mk "$B/hlo" "$B/libhlo.a" "$B/libhlo.so" "$B/examples/run_model" 2>&1); then
  printf '%s\n' "$out" | tail -n 20
  bad "make BUILD=$B hlo libhlo.a libhlo.so examples/run_model"; finish
fi
VERSION=$("$B/hlo" --version | awk '{print $2}')
MAKE_VERSION=$(sed -n 's/^HLO_VERSION := //p' Makefile)
check "hlo --version ($VERSION) is the Makefile's HLO_VERSION ($MAKE_VERSION)" \
  [ -n "$VERSION" -a "$VERSION" = "$MAKE_VERSION" ]
MAJOR=${VERSION%%.*}
if ! want_out=$("$B/examples/run_model" "$MODEL" 2>&1); then
  printf '%s\n' "$want_out" | tail -n 8; bad "$B/examples/run_model $MODEL"; finish
fi
check "run_model's output has the documented form: $want_out" \
  sh -c 'printf "%s\n" "$1" | grep -Eq "^result 0: f32, rank [0-9]+, [0-9]+ bytes, first value -?[0-9.e+-]+, sum -?[0-9.e+-]+$"' \
  sh "$want_out"

# The files install writes, relative to the prefix.
{
  echo bin/hlo
  for h in include/hlo/*.h include/hlo/*.def; do echo "$h"; done
  printf '%s\n' lib/libhlo.a lib/libhlo.so "lib/libhlo.so.$MAJOR" "lib/libhlo.so.$VERSION" \
    lib/pkgconfig/hlo.pc
} | LC_ALL=C sort > "$T/want_files"
# Files already in a prefix, which install and uninstall must leave alone.
seed() {
  mkdir -p "$1/bin" "$1/lib/pkgconfig" "$1/include"
  : > "$1/bin/other"; : > "$1/lib/libother.so.1"; : > "$1/lib/pkgconfig/other.pc"
  : > "$1/include/other.h"
  printf '%s\n' bin/other include/other.h lib/libother.so.1 lib/pkgconfig/other.pc
}
files_in() {  # PREFIX: its files and links, relative, sorted
  (cd "$1" && find . \( -type f -o -type l \) | sed 's|^\./||' | LC_ALL=C sort)
}
same_files() {  # NAME PREFIX WANT_LIST
  files_in "$2" > "$T/got_files"
  if cmp -s "$T/got_files" "$3"; then ok; else
    bad "$1: the files in $2 differ from the expected list (< want, > got):"
    diff "$3" "$T/got_files" | head -n 20
  fi
}
# check_prefix NAME ROOT PREFIX: what one install put in ROOT (= DESTDIR + PREFIX).
check_prefix() {
  n=$1; R=$2; PFX=$3
  cat "$T/want_files" "$T/seeded" | LC_ALL=C sort > "$T/want_all"
  same_files "$n: file list" "$R" "$T/want_all"
  check "$n: lib/libhlo.so.$VERSION is a regular file" \
    sh -c '[ -f "$1" ] && [ ! -L "$1" ]' sh "$R/lib/libhlo.so.$VERSION"
  check "$n: lib/libhlo.so.$MAJOR -> libhlo.so.$VERSION" \
    [ "$(readlink "$R/lib/libhlo.so.$MAJOR")" = "libhlo.so.$VERSION" ]
  check "$n: lib/libhlo.so -> libhlo.so.$MAJOR" [ "$(readlink "$R/lib/libhlo.so")" = "libhlo.so.$MAJOR" ]
  soname=$(readelf -d "$R/lib/libhlo.so.$VERSION" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  check "$n: soname '$soname' is libhlo.so.$MAJOR" [ "$soname" = "libhlo.so.$MAJOR" ]
  nm -D --defined-only "$R/lib/libhlo.so.$VERSION" | awk 'NF == 3 {print $3}' > "$T/syms"
  extra=$(grep -v '^hlo_' "$T/syms" | head -n 5 | tr '\n' ' ')
  check "$n: libhlo.so exports hlo_ symbols only (also: $extra)" [ -z "$extra" ]
  check "$n: libhlo.so exports hlo_version, hlo_build_id, hlo_module_load" \
    sh -c 'grep -qx hlo_version "$1" && grep -qx hlo_build_id "$1" && grep -qx hlo_module_load "$1"' sh "$T/syms"
  check "$n: bin/hlo, libhlo.so executable; headers, libhlo.a, hlo.pc not" sh -c \
    '[ -x "$1/bin/hlo" ] && [ -x "$1/lib/libhlo.so.$2" ] && [ ! -x "$1/lib/libhlo.a" ] &&
     [ ! -x "$1/include/hlo/hlo.h" ] && [ ! -x "$1/lib/pkgconfig/hlo.pc" ]' sh "$R" "$VERSION"
  hdr_ok=1
  for h in include/hlo/*.h include/hlo/*.def; do cmp -s "$h" "$R/$h" || hdr_ok=0; done
  check "$n: installed headers are include/hlo's" [ $hdr_ok = 1 ]
  check "$n: installed libhlo.a is $B's" cmp -s "$B/libhlo.a" "$R/lib/libhlo.a"
  got=$(cd / && "$R/bin/hlo" --version 2>&1)
  check "$n: installed bin/hlo --version ($got) is the build's" [ "$got" = "$("$B/hlo" --version)" ]
  pcv=$(sed -n 's/^Version: //p' "$R/lib/pkgconfig/hlo.pc")
  check "$n: hlo.pc Version ($pcv) is hlo --version's ($VERSION)" [ "$pcv" = "$VERSION" ]
  pcp=$(sed -n 's/^prefix=//p' "$R/lib/pkgconfig/hlo.pc")
  check "$n: hlo.pc prefix ($pcp) is PREFIX ($PFX)" [ "$pcp" = "$PFX" ]
}
# build_run NAME LIBDIR CC_ARGS...: cc examples/run_model.c with CC_ARGS (pkg-config's
# flags) into $T/rm_NAME, runs it on the model with LD_LIBRARY_PATH=LIBDIR (none
# when LIBDIR is ""); its output must be the in-tree run_model's.
build_run() {
  n=$1; ldp=$2; shift 2
  exe="$T/rm_$(printf '%s' "$n" | tr -c 'a-zA-Z0-9\n' _)"
  if ! out=$(cc examples/run_model.c "$@" -o "$exe" 2>&1); then
    printf '%s\n' "$out" | tail -n 10; bad "$n: cc examples/run_model.c $*"; return 1
  fi
  ok
  if [ -n "$ldp" ]; then got=$(LD_LIBRARY_PATH="$ldp" "$exe" "$MODEL" 2>&1); rc=$?
  else got=$("$exe" "$MODEL" 2>&1); rc=$?; fi
  if [ $rc -eq 0 ] && [ "$got" = "$want_out" ]; then ok; else
    bad "$n: run_model (exit $rc) printed: $got; want: $want_out"
  fi
  readelf -d "$exe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' > "$exe.needed"
}

# ------------------------------------------------ install with PREFIX
P="$T/prefix"
seed "$P" | LC_ALL=C sort > "$T/seeded"
if ! out=$(mk install PREFIX="$P" 2>&1); then
  printf '%s\n' "$out" | tail -n 20; bad "make install PREFIX=$P"; finish
fi
ok
# Nothing was built: install only copies an up-to-date build.
plan=$(make --no-print-directory -n BUILD="$B" install PREFIX="$P" 2>&1)
rebuilt=$(printf '%s\n' "$plan" | grep -E -- ' -o |^ar |HLO_BUILD_ID' | head -n 3)
check "make -n install rebuilds nothing (it would run: $rebuilt)" [ -z "$rebuilt" ]
check_prefix "PREFIX" "$P" "$P"
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
unset PKG_CONFIG_SYSROOT_DIR
check "pkg-config --modversion hlo is $VERSION" [ "$(pkg-config --modversion hlo)" = "$VERSION" ]
cflags=$(echo $(pkg-config --cflags hlo)); libs=$(echo $(pkg-config --libs hlo))  # words, trimmed
check "pkg-config --cflags hlo ($cflags) is -I$P/include" [ "$cflags" = "-I$P/include" ]
check "pkg-config --libs hlo ($libs) is -L$P/lib -lhlo" [ "$libs" = "-L$P/lib -lhlo" ]
# shellcheck disable=SC2046 # the flags are words
if build_run "PREFIX dynamic" "$P/lib" $(pkg-config --cflags --libs hlo); then
  check "PREFIX dynamic: run_model needs libhlo.so.$MAJOR" grep -qx "libhlo.so.$MAJOR" "$T/rm_PREFIX_dynamic.needed"
fi
# A second install over the first (an upgrade in place) succeeds and writes the same files.
check "make install again over the same PREFIX" sh -c 'make --no-print-directory -s BUILD="$1" install PREFIX="$2" >/dev/null 2>&1' \
  sh "$B" "$P"
same_files "PREFIX, installed twice" "$P" "$T/want_all"

# ------------------------------------------------ install staged under DESTDIR
D="$T/stage"
SP="/opt/hlo-suite-install.$$"   # the PREFIX named in hlo.pc; never created
seed "$D$SP" > /dev/null
if ! out=$(mk install PREFIX="$SP" DESTDIR="$D" 2>&1); then
  printf '%s\n' "$out" | tail -n 20; bad "make install PREFIX=$SP DESTDIR=$D"; finish
fi
ok
check "DESTDIR: nothing written to PREFIX $SP itself" [ ! -e "$SP" ]
check_prefix "DESTDIR" "$D$SP" "$SP"
# hlo.pc names PREFIX; its directories follow ${prefix}, which pkg-config can
# point at the staged copy.
export PKG_CONFIG_PATH="$D$SP/lib/pkgconfig"
pc() { pkg-config --define-variable=prefix="$D$SP" "$@"; }
check "DESTDIR: pkg-config --cflags with prefix=DESTDIR+PREFIX" [ "$(echo $(pc --cflags hlo))" = "-I$D$SP/include" ]
# shellcheck disable=SC2046
build_run "DESTDIR dynamic" "$D$SP/lib" $(pc --cflags --libs hlo)
# The static library alone: a prefix without libhlo.so (as a static-only
# install has), linked with `pkg-config --static --libs` and run with no
# LD_LIBRARY_PATH; the program must not need libhlo.so.
rm -f "$D$SP/lib/libhlo.so" "$D$SP/lib/libhlo.so.$MAJOR" "$D$SP/lib/libhlo.so.$VERSION"
# shellcheck disable=SC2046
if build_run "DESTDIR static" "" $(pc --cflags hlo) $(pc --static --libs hlo); then
  check "static: run_model needs no libhlo.so ($(tr '\n' ' ' < "$T/rm_DESTDIR_static.needed"))" \
    sh -c '! grep -q "^libhlo" "$1"' sh "$T/rm_DESTDIR_static.needed"
fi

# ------------------------------------------------ uninstall
if out=$(mk uninstall PREFIX="$P" 2>&1); then ok; else
  printf '%s\n' "$out" | tail -n 10; bad "make uninstall PREFIX=$P"
fi
same_files "uninstall PREFIX: only the files that were there before remain" "$P" "$T/seeded"
check "uninstall PREFIX: include/hlo removed" [ ! -e "$P/include/hlo" ]
if out=$(mk uninstall PREFIX="$SP" DESTDIR="$D" 2>&1); then ok; else
  printf '%s\n' "$out" | tail -n 10; bad "make uninstall PREFIX=$SP DESTDIR=$D"
fi
same_files "uninstall DESTDIR: only the files that were there before remain" "$D$SP" "$T/seeded"
check "uninstall DESTDIR: include/hlo removed" [ ! -e "$D$SP/include/hlo" ]
finish
