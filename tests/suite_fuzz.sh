#!/bin/sh
# suite_fuzz.sh — the fuzz suite of tests/run_all.sh: replays every crash
# reproducer (tests/fuzz/crashes) and seed (tests/fuzz/corpus) through the
# fuzz target once, then fuzzes for ${FUZZ_SECONDS:-30} seconds. Prints
# "fuzz: 1 passed, 0 failed" (or "0 passed, 1 failed"); when clang or
# libFuzzer is missing it prints why and "fuzz: 0 passed, 0 failed".
# Usage: tests/suite_fuzz.sh [BUILD_DIR]   (BUILD_DIR is unused: the fuzzer
# is built with clang into build/fuzz)
cd "$(dirname "$0")/.." || exit 1
sh tests/fuzz/run.sh --regress
rc=$?
if [ $rc -eq 3 ]; then echo "fuzz: skipped (see above)"; echo "fuzz: 0 passed, 0 failed"; exit 0; fi
if [ $rc -ne 0 ]; then
  echo "fuzz: a crash reproducer or seed still fails (log: build/fuzz/regress.log)"
  echo "fuzz: 0 passed, 1 failed"; exit 1
fi
sh tests/fuzz/run.sh "${FUZZ_SECONDS:-30}"
rc=$?
if [ $rc -ne 0 ]; then echo "fuzz: 0 passed, 1 failed"; exit 1; fi
echo "fuzz: 1 passed, 0 failed"
